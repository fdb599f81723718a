"""The summarization scorer, exactly as seed 002 specifies it."""

from __future__ import annotations

from typing import Any

import pytest

from assay.scorers import create_summarization_scorer
from assay.scorers.summarization import SummarizationPrompts
from assay.testing import FakeOpenAIServer, RecordedRequest, Reply

SOURCE = (
    "The company was founded in 1995 by John Smith. It started with 10 employees and "
    "grew to 500 by 2020. The company is based in Seattle."
)
SUMMARY = "Founded in 1995 by John Smith, the Seattle company grew to 500 staff."
QUESTIONS = [
    "Was the company founded in 1995?",
    "Was it founded by John Smith?",
    "Did it start with 10 employees?",
    "Is it based in Seattle?",
]


def claims(*supported: bool) -> dict[str, Any]:
    return {
        "claims": [
            {"claim": f"claim {i}", "reason": f"why {i}", "supported": s} for i, s in enumerate(supported)
        ]
    }


def answers(*answered: bool) -> dict[str, Any]:
    return {
        "answers": [
            {"question": "echoed", "reason": f"because {i}", "answered": a} for i, a in enumerate(answered)
        ]
    }


class Judge:
    """Replies by step, as a real judge would be asked."""

    def __init__(self, alignment: Any, questions: Any, coverage: Any) -> None:
        self.replies = {
            "SummaryAlignment": alignment,
            "SummaryQuestions": questions,
            "SummaryCoverage": coverage,
        }

    def __call__(self, request: RecordedRequest) -> Any:
        reply = self.replies[request.schema_name or ""]
        return reply.pop(0) if isinstance(reply, list) else reply


def scorer_on(server: FakeOpenAIServer, **options: Any) -> Any:
    return create_summarization_scorer(server.chat_model(), **options)


MASTRA_INPUT = {"inputMessages": [{"id": "1", "role": "user", "content": SOURCE}]}
MASTRA_OUTPUT = [{"id": "2", "role": "assistant", "content": SUMMARY}]


def test_score_is_min_of_alignment_and_coverage_with_reason_naming_the_decider(
    server: FakeOpenAIServer,
) -> None:
    server.handler = Judge(
        claims(True, True, False), {"questions": QUESTIONS}, answers(True, True, False, False)
    )
    result = scorer_on(server).run(input=MASTRA_INPUT, output=MASTRA_OUTPUT)
    assert result.error is None
    assert result.score == pytest.approx(0.5)  # alignment 2/3, coverage 2/4
    assert "coverage decides" in result.reason
    assert "alignment 0.67" in result.reason and "coverage 0.50" in result.reason
    assert "Did it start with 10 employees?" in result.reason
    assert result.preprocess_step_result == {
        "alignment": [
            {"claim": f"claim {i}", "supported": s, "reason": f"why {i}"}
            for i, s in enumerate((True, True, False))
        ],
        "questions": QUESTIONS,
    }
    coverage = result.analyze_step_result["coverage"]
    assert [c["question"] for c in coverage] == QUESTIONS  # matched by position
    assert [c["answered"] for c in coverage] == [True, True, False, False]


def test_three_calls_and_the_coverage_call_never_sees_the_source(server: FakeOpenAIServer) -> None:
    server.handler = Judge(claims(True), {"questions": QUESTIONS}, answers(True, True, True, True))
    result = scorer_on(server).run(input=MASTRA_INPUT, output=MASTRA_OUTPUT)
    assert result.score == 1.0 and "tie" in result.reason
    by_step = {request.schema_name: request.text for request in server.chat_requests}
    assert len(server.chat_requests) == 3 and set(by_step) == {
        "SummaryAlignment",
        "SummaryQuestions",
        "SummaryCoverage",
    }
    assert SOURCE in by_step["SummaryAlignment"] and SUMMARY in by_step["SummaryAlignment"]
    assert SOURCE in by_step["SummaryQuestions"] and SUMMARY not in by_step["SummaryQuestions"]
    coverage = by_step["SummaryCoverage"]
    assert SUMMARY in coverage and all(q in coverage for q in QUESTIONS)
    for sentence in SOURCE.split(". "):
        assert sentence.strip(". ") not in coverage


def test_alignment_decides_when_claims_are_unsupported(server: FakeOpenAIServer) -> None:
    server.handler = Judge(
        claims(True, False, False, False), {"questions": QUESTIONS[:2]}, answers(True, True)
    )
    result = scorer_on(server, scale=10).run(input=SOURCE, output=SUMMARY)
    assert result.score == pytest.approx(2.5)  # 0.25 x scale 10
    assert "alignment decides" in result.reason and "'claim 1'" in result.reason


@pytest.mark.parametrize(
    "alignment,questions,decider",
    [
        (claims(), {"questions": QUESTIONS}, "no checkable claim"),
        (claims(True), {"questions": []}, "no question"),
    ],
)
def test_no_claim_or_no_question_scores_zero(
    server: FakeOpenAIServer, alignment: Any, questions: Any, decider: str
) -> None:
    server.handler = Judge(alignment, questions, answers(*[True] * len(questions["questions"])))
    result = scorer_on(server).run(input=SOURCE, output=SUMMARY)
    assert result.score == 0.0 and decider in result.reason and result.error is None


def test_max_questions_is_asked_for_and_enforced(server: FakeOpenAIServer) -> None:
    server.handler = Judge(claims(True), {"questions": QUESTIONS}, answers(True, False))
    result = scorer_on(server, max_questions=2).run(input=SOURCE, output=SUMMARY)
    assert result.preprocess_step_result["questions"] == QUESTIONS[:2]
    assert result.score == 0.5
    asked = next(r for r in server.chat_requests if r.schema_name == "SummaryQuestions")
    assert "at most 2 closed questions" in asked.text


def test_source_option_and_extractor_take_precedence(server: FakeOpenAIServer) -> None:
    server.handler = Judge(claims(True), {"questions": QUESTIONS[:1]}, answers(True))
    scorer_on(server, source="FIXED SOURCE").run(input=SOURCE, output=SUMMARY)
    scorer_on(
        server, source="FIXED SOURCE", source_extractor=lambda i, o: f"TOOL RESULT for {len(o)} messages"
    ).run(input=MASTRA_INPUT, output=MASTRA_OUTPUT)
    questions = [r.text for r in server.chat_requests if r.schema_name == "SummaryQuestions"]
    assert "FIXED SOURCE" in questions[0] and SOURCE not in questions[0]
    assert "TOOL RESULT for 1 messages" in questions[1]


def test_the_summary_is_the_last_assistant_message_with_text(server: FakeOpenAIServer) -> None:
    server.handler = Judge(claims(True), {"questions": QUESTIONS[:1]}, answers(True))
    output = [
        {"role": "assistant", "content": "draft"},
        {"role": "tool", "content": "x"},
        {"role": "assistant", "content": [{"type": "text", "text": "final summary"}]},
        {"role": "assistant", "content": ""},
    ]
    scorer_on(server).run(input=SOURCE, output=output)
    coverage = next(r for r in server.chat_requests if r.schema_name == "SummaryCoverage")
    assert "final summary" in coverage.text and "draft" not in coverage.text


def test_coverage_with_the_wrong_number_of_answers_is_retried(server: FakeOpenAIServer) -> None:
    server.handler = Judge(claims(True), {"questions": QUESTIONS[:2]}, [answers(True), answers(True, False)])
    result = scorer_on(server).run(input=SOURCE, output=SUMMARY)
    assert result.score == 0.5 and len(server.chat_requests) == 4


def test_a_failing_judge_is_an_error_with_usage_never_a_zero(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: (
        Reply.server_error(500)
        if request.schema_name == "SummaryCoverage"
        else Judge(claims(True), {"questions": QUESTIONS}, None)(request)
    )
    result = scorer_on(server).run(input=SOURCE, output=SUMMARY)
    assert result.score is None and "ModelCallError" in (result.error or "")
    assert result.usage["calls"] == 2


def test_missing_source_and_empty_summary(server: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError, match="no source text"):
        scorer_on(server).run(input=[{"role": "system", "content": "x"}], output=SUMMARY)
    empty = scorer_on(server).run(input=SOURCE, output=[{"role": "assistant", "content": " "}])
    assert empty.score == 0.0 and "empty" in (empty.reason or "")
    assert server.chat_requests == []


def test_the_coverage_prompt_may_not_mention_the_source() -> None:
    with pytest.raises(ValueError, match=r"unknown placeholder\(s\) \['source'\]"):
        SummarizationPrompts(coverage="{summary} {questions} {source}")


def test_mastra_options_object(server: FakeOpenAIServer) -> None:
    server.handler = Judge(claims(True), {"questions": QUESTIONS}, answers(True, False))
    scorer = create_summarization_scorer(
        model=server.chat_model(),
        options={"sourceExtractor": lambda i, o: "TOOL SOURCE", "maxQuestions": 2},
    )
    result = scorer.run({"input": MASTRA_INPUT, "output": MASTRA_OUTPUT})  # Mastra's one object
    assert result.preprocess_step_result["questions"] == QUESTIONS[:2] and result.score == 0.5
    asked = next(r for r in server.chat_requests if r.schema_name == "SummaryQuestions")
    assert "TOOL SOURCE" in asked.text
    with pytest.raises(TypeError, match="unknown summarization options \\['maxQuestion'\\]"):
        create_summarization_scorer(model=server.chat_model(), options={"maxQuestion": 3})
