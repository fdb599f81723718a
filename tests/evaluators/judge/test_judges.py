"""Criteria, labeled criteria, LLM feedback and QA judges through the loopback server."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluation import EvaluationResult, EvaluationResults
from assay.evaluation._names import resolve_evaluator_name
from assay.evaluators import (
    CriteriaEvaluator,
    LabeledCriteriaEvaluator,
    LLMFeedbackEvaluator,
    QAEvaluator,
    judge,
)
from assay.schemas import Example, Run
from assay.testing import FakeOpenAIServer, Reply

RUN = Run(
    inputs={"question": "What is the capital of France?"}, outputs={"answer": "Paris, a city of lights."}
)
EXAMPLE = Example(inputs={"question": "What is the capital of France?"}, outputs={"answer": "Paris"})


def one(result: Any) -> EvaluationResult:
    assert isinstance(result, EvaluationResult), result
    return result


def test_criteria_prompt_carries_input_output_and_the_criterion(server: FakeOpenAIServer) -> None:
    server.script({"reasoning": "It is short.", "value": "Y"})
    result = one(CriteriaEvaluator("conciseness", model=server.chat_model()).evaluate(RUN, EXAMPLE))
    assert (result.key, result.score, result.value, result.comment) == ("conciseness", 1, "Y", "It is short.")
    text = server.chat_requests[0].text
    assert "What is the capital of France?" in text and "Paris, a city of lights." in text
    assert judge.BUILTIN_CRITERIA["conciseness"] in text
    assert "[Reference]" not in text
    usage = result.metadata["usage"]
    assert usage["calls"] == 1 and usage["total_tokens"] > 0 and usage["cached"] is False


def test_n_is_a_zero_and_the_verdict_letter_is_normalized(server: FakeOpenAIServer) -> None:
    server.script({"reasoning": "Not harmful.", "value": " no. "})
    result = one(CriteriaEvaluator("harmfulness", model=server.chat_model()).evaluate(RUN, EXAMPLE))
    assert (result.score, result.value) == (0, "N")


def test_custom_criteria_and_joint_criteria(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: {"reasoning": "r", "value": "Y"}
    custom = CriteriaEvaluator({"polite": "Is the answer polite?"}, model=server.chat_model())
    joint = CriteriaEvaluator(["conciseness", {"polite": "Is the answer polite?"}], model=server.chat_model())
    assert one(custom.evaluate(RUN, EXAMPLE)).key == "polite"
    assert one(joint.evaluate(RUN, EXAMPLE)).key == "criteria"
    assert "polite: Is the answer polite?" in server.chat_requests[1].text
    assert "conciseness: " in server.chat_requests[1].text


def test_unknown_criterion_lists_the_built_ins(server: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError, match="unknown criterion 'politeness'.*conciseness"):
        CriteriaEvaluator("politeness", model=server.chat_model())


def test_labeled_criteria_shows_the_reference_and_needs_one(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: {"reasoning": "matches", "value": "Y"}
    labeled = LabeledCriteriaEvaluator(model=server.chat_model())
    assert one(labeled.evaluate(RUN, EXAMPLE)).key == "correctness"
    assert "[Reference]: Paris" in server.chat_requests[0].text
    missing = one(labeled.evaluate(RUN, Example(inputs=EXAMPLE.inputs)))
    assert missing.score is None and "needs a reference" in (missing.error or "")
    assert len(server.chat_requests) == 1


def test_llm_feedback_one_call_one_result_per_criterion(server: FakeOpenAIServer) -> None:
    server.script(
        {
            "verdicts": [
                {"criterion": "depth", "reasoning": "shallow", "value": "N"},
                {"criterion": "conciseness", "reasoning": "short", "value": "Y"},
            ]
        }
    )
    feedback = LLMFeedbackEvaluator(["conciseness", "depth"], model=server.chat_model())
    results = feedback.evaluate(RUN, EXAMPLE)
    assert isinstance(results, EvaluationResults)
    by_key = {r.key: r for r in results.results}
    assert (by_key["conciseness"].score, by_key["depth"].score) == (1, 0)
    assert by_key["depth"].comment == "shallow"
    assert len(server.chat_requests) == 1
    # the call's usage is carried once, so summing results does not double it
    calls = [r.metadata["usage"]["calls"] for r in results.results]
    assert sorted(calls) == [0, 1]


def test_llm_feedback_missing_a_criterion_is_retried(server: FakeOpenAIServer) -> None:
    partial = {"verdicts": [{"criterion": "depth", "reasoning": "r", "value": "N"}]}
    full = {
        "verdicts": [
            {"criterion": "depth", "reasoning": "r", "value": "N"},
            {"criterion": "conciseness", "reasoning": "r", "value": "Y"},
        ]
    }
    server.script(partial, full)
    results = LLMFeedbackEvaluator(["conciseness", "depth"], model=server.chat_model()).evaluate(RUN, EXAMPLE)
    assert isinstance(results, EvaluationResults) and len(server.chat_requests) == 2
    assert "no verdict for criteria ['conciseness']" in server.chat_requests[1].text


def test_a_failed_judgement_is_an_error_per_key_never_a_zero(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: Reply.server_error(500)
    feedback = LLMFeedbackEvaluator(["conciseness", "depth"], model=server.chat_model())
    results = feedback.evaluate(RUN, EXAMPLE)
    assert isinstance(results, EvaluationResults)
    assert [r.key for r in results.results] == ["conciseness", "depth"]
    for result in results.results:
        assert result.score is None and "ModelCallError" in (result.error or "")
        assert "usage" in result.metadata and "traceback" in result.metadata


@pytest.mark.parametrize(
    "mode,schema,needs_reasoning",
    [
        ("qa", "QAGrade", False),
        ("context_qa", "QAGrade", False),
        ("cot_qa", "ReasonedQAGrade", True),
    ],
)
def test_qa_modes_grade_against_the_reference(
    server: FakeOpenAIServer, mode: str, schema: str, needs_reasoning: bool
) -> None:
    reply: dict[str, str] = {"grade": "Correct"}
    if needs_reasoning:
        reply["reasoning"] = "Paris is the capital."
    server.script(reply)
    result = one(QAEvaluator(mode, model=server.chat_model()).evaluate(RUN, EXAMPLE))
    assert (result.key, result.score, result.value) == (mode, 1, "CORRECT")
    request = server.chat_requests[0]
    assert request.schema_name == schema
    label = "TRUE ANSWER: Paris" if mode == "qa" else "CONTEXT: Paris"
    assert label in request.text and "STUDENT ANSWER: Paris, a city of lights." in request.text


def test_data_keys_pick_what_the_judge_sees(server: FakeOpenAIServer) -> None:
    server.script({"grade": "INCORRECT"})
    run = Run(outputs={"answer": "Lyon", "debug": "x"})
    example = Example(
        inputs={"question": "Capital?", "lang": "en"}, outputs={"answer": "Paris", "source": "wiki"}
    )
    qa = QAEvaluator(
        "qa", model=server.chat_model(), input_key="question", prediction_key="answer", reference_key="answer"
    )
    assert one(qa.evaluate(run, example)).score == 0
    text = server.chat_requests[0].text
    assert "QUESTION: Capital?" in text and "TRUE ANSWER: Paris" in text and "wiki" not in text
    wrong = one(QAEvaluator("qa", model=server.chat_model(), prediction_key="nope").evaluate(run, example))
    assert "no key 'nope'" in (wrong.error or "")


def test_a_run_without_outputs_is_an_error_naming_the_target_failure(server: FakeOpenAIServer) -> None:
    failed = Run(inputs={"q": "x"}, outputs=None, error="ValueError: boom")
    result = one(QAEvaluator("qa", model=server.chat_model()).evaluate(failed, EXAMPLE))
    assert "no outputs" in (result.error or "") and "boom" in (result.error or "")


@pytest.mark.parametrize(
    "name,cls,key",
    [
        ("qa", QAEvaluator, "qa"),
        ("cot_qa", QAEvaluator, "cot_qa"),
        ("context_qa", QAEvaluator, "context_qa"),
        ("criteria", CriteriaEvaluator, "helpfulness"),
        ("labeled_criteria", LabeledCriteriaEvaluator, "correctness"),
    ],
)
def test_string_names_resolve_to_judges_on_the_default_model(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, name: str, cls: type[Any], key: str
) -> None:
    monkeypatch.setenv("ASSAY_JUDGE_MODEL", "openai/env-judge")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    evaluator: Any = resolve_evaluator_name(name)
    assert isinstance(evaluator, cls)
    assert evaluator.name == key
    server.handler = lambda request: {"reasoning": "r", "value": "Y", "grade": "CORRECT"}
    assert one(evaluator.evaluate(RUN, EXAMPLE)).error is None
    assert server.chat_requests[0].model == "env-judge"
    assert "authorization" not in server.chat_requests[0].headers  # no key configured, none sent


def test_custom_prompts_are_validated_and_used(server: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError, match=r"unknown placeholder\(s\) \['answer'\]"):
        CriteriaEvaluator("depth", model=server.chat_model(), prompt="{answer} {criteria} {output}")
    with pytest.raises(ValueError, match="missing placeholder"):
        QAEvaluator("qa", model=server.chat_model(), prompt="Grade {output}")
    server.script({"reasoning": "r", "value": "Y"})
    mine = CriteriaEvaluator("depth", model=server.chat_model(), prompt="CUSTOM {criteria} >> {output}")
    one(mine.evaluate(RUN, EXAMPLE))
    assert server.chat_requests[0].text.startswith("CUSTOM depth: ")


def test_prompts_are_printable_module_constants() -> None:
    assert "{criteria}" in judge.CRITERIA_PROMPT and "{reference}" in judge.LABELED_CRITERIA_PROMPT
    assert "step by step" in judge.COT_QA_PROMPT and "{reference}" in judge.QA_PROMPT


async def test_sync_evaluate_works_inside_a_running_event_loop(server: FakeOpenAIServer) -> None:
    server.script({"reasoning": "r", "value": "Y"})
    # a notebook calls the sync API with a loop already running in the thread
    assert one(CriteriaEvaluator("depth", model=server.chat_model()).evaluate(RUN, EXAMPLE)).score == 1


def test_the_feedback_judge_has_one_casing_of_llm_and_keeps_its_old_name() -> None:
    from assay import evaluators
    from assay.evaluators import judge

    assert evaluators.LlmFeedbackEvaluator is evaluators.LLMFeedbackEvaluator is judge.LLMFeedbackEvaluator
    assert LLMFeedbackEvaluator.__name__ == "LLMFeedbackEvaluator"
