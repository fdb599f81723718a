"""One judge core for both faces, and one rule for the text of an output."""

from __future__ import annotations

from typing import Any

import pytest

from assay._output_text import output_text
from assay.evaluators import CriteriaEvaluator, ExactMatchEvaluator
from assay.evaluators._fields import as_text
from assay.evaluators.judge._core import JudgeCore
from assay.evaluators.judge._text import render
from assay.schemas import Example, Run
from assay.scorers import create_toxicity_scorer
from assay.scorers._base import to_text
from assay.testing import FakeOpenAIServer

CASES: list[tuple[Any, str]] = [
    (None, ""),
    ("plain", "plain"),
    (42, "42"),
    (True, "true"),
    ({"text": "A", "answer": "B"}, "B"),
    ({"output": "o", "answer": "a"}, "o"),
    ({"only": "x"}, "x"),
    ({"role": "assistant", "content": "hi"}, "hi"),
    ({"content": [{"type": "text", "text": "p1"}, {"type": "text", "text": "p2"}]}, "p1\np2"),
    ([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}], "a\nb"),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "r"}], "user: q\nassistant: r"),
    ({"messages": [{"role": "user", "content": "q"}], "other": 1}, "q"),
    ({"b": 1, "a": "é"}, '{"a": "é", "b": 1}'),
    ([1, 2], "[1, 2]"),
]


@pytest.mark.parametrize("value, text", CASES)
def test_every_face_turns_an_output_into_the_same_text(value: Any, text: str) -> None:
    assert output_text(value) == text
    assert render(value) == text  # what a judge shows the model
    assert to_text(value) == text  # what a scorer reads
    assert as_text(value) == text  # what a text evaluator compares


def test_the_evaluator_and_the_scorer_face_share_the_core(server: FakeOpenAIServer) -> None:
    judge = CriteriaEvaluator("conciseness", model=server.chat_model())
    scorer = create_toxicity_scorer(server.chat_model())
    for face in (judge, scorer):
        assert isinstance(face.core, JudgeCore)
        assert face.chat is face.core.chat and face.model_name == face.core.model_name


def test_both_faces_show_the_model_the_answer_field(server: FakeOpenAIServer) -> None:
    """``{"text": ..., "answer": ...}``: both faces put the answer in the prompt."""
    server.script(
        {"reasoning": "fine", "value": "Y"}, {"verdicts": [{"item": "x", "reason": "r", "verdict": "no"}]}
    )
    outputs = {"text": "DRAFT-TEXT", "answer": "FINAL-ANSWER"}
    CriteriaEvaluator("conciseness", model=server.chat_model()).evaluate(
        Run(inputs={"question": "q"}, outputs=outputs), Example(inputs={"question": "q"})
    )
    create_toxicity_scorer(server.chat_model()).run(input="q", output=outputs)
    prompts = [request.text for request in server.chat_requests]
    assert len(prompts) == 2
    for prompt in prompts:
        assert "FINAL-ANSWER" in prompt and "DRAFT-TEXT" not in prompt


def test_usage_is_metered_and_recorded_the_same_way_by_both_faces(server: FakeOpenAIServer) -> None:
    server.script(
        {"reasoning": "fine", "value": "Y"}, {"verdicts": [{"item": "x", "reason": "r", "verdict": "no"}]}
    )
    judged = CriteriaEvaluator("conciseness", model=server.chat_model()).evaluate(
        Run(inputs={"q": "q"}, outputs={"output": "o"}), Example(inputs={"q": "q"})
    )
    scorer = create_toxicity_scorer(server.chat_model())
    scored = scorer.to_evaluation_result(scorer.run(input="q", output="o"))
    for result in (judged, scored):
        metadata = result.metadata  # type: ignore[union-attr]
        assert set(metadata) >= {"usage", "model"} and metadata["usage"]["total_tokens"] > 0
        assert metadata["model"] == scorer.model_name


def test_a_failing_call_keeps_its_usage_on_both_faces(server: FakeOpenAIServer) -> None:
    server.script(*["not json"] * 10)
    judged = CriteriaEvaluator("conciseness", model=server.chat_model()).evaluate(
        Run(inputs={"q": "q"}, outputs={"output": "o"}), Example(inputs={"q": "q"})
    )
    scored = create_toxicity_scorer(server.chat_model()).run(input="q", output="o")
    assert judged.error and judged.metadata["usage"]["total_tokens"] > 0  # type: ignore[union-attr]
    assert scored.error and scored.usage and scored.usage["total_tokens"] > 0  # type: ignore[attr-defined]


def test_exact_match_reads_the_same_field_as_the_judges() -> None:
    """A nested output is compared by its text, the text a judge would be shown."""
    evaluator = ExactMatchEvaluator()
    run = Run(outputs={"output": {"text": "draft", "answer": "Paris"}})
    result = evaluator.evaluate(run, Example(outputs={"output": "Paris"}))
    assert result.score == 1  # type: ignore[union-attr]
