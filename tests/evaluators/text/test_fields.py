"""Where evaluators find the output and the reference, and the errored results when they cannot."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluators._fields import as_text
from assay.evaluators.text.string import ExactMatchEvaluator
from assay.schemas import Example, Run


def test_default_key_is_output_then_the_only_value(run_of: Any, example_of: Any) -> None:
    evaluator = ExactMatchEvaluator()
    assert evaluator.evaluate(run_of("a"), example_of("a")).score == 1.0
    only = evaluator.evaluate(run_of(answer="a"), example_of(expected="a"))
    assert only.score == 1.0 and only.error is None


def test_named_keys_pick_the_values(run_of: Any, example_of: Any) -> None:
    evaluator = ExactMatchEvaluator(output_key="answer", reference_key="gold")
    run = run_of(answer="Paris", reasoning="...")
    assert evaluator.evaluate(run, example_of(gold="Paris", other="x")).score == 1.0
    assert evaluator.evaluate(run, example_of(gold="Rome", other="x")).score == 0.0


def test_output_key_is_also_looked_up_in_the_reference(run_of: Any, example_of: Any) -> None:
    evaluator = ExactMatchEvaluator(output_key="answer")
    run = run_of(answer="Paris", reasoning="...")
    assert evaluator.evaluate(run, example_of(answer="Paris", notes="n")).score == 1.0


def test_a_missing_named_key_is_an_errored_result_naming_the_keys(run_of: Any, example_of: Any) -> None:
    result = ExactMatchEvaluator(output_key="answer").evaluate(run_of(text="x"), example_of("x"))
    assert result.score is None
    assert "run.outputs has no key 'answer'" in result.error
    assert "'text'" in result.error and "output_key=" in result.error
    assert "Traceback" in result.metadata["traceback"]


def test_several_keys_without_a_choice_is_an_errored_result(run_of: Any, example_of: Any) -> None:
    result = ExactMatchEvaluator().evaluate(run_of(a="1", b="2"), example_of("1"))
    assert result.score is None
    assert "several keys ('a', 'b')" in result.error and "output_key=" in result.error


def test_a_missing_reference_names_the_example(run_of: Any, example_of: Any) -> None:
    example = example_of(gold="x", notes="y")
    result = ExactMatchEvaluator(reference_key="answer").evaluate(run_of("x"), example)
    assert result.score is None
    assert str(example.id) in result.error and "reference_key=" in result.error


def test_no_example_or_empty_outputs_are_errored_results(run_of: Any, example_of: Any) -> None:
    evaluator = ExactMatchEvaluator()
    assert "needs an example" in evaluator.evaluate(run_of("x"), None).error
    empty = evaluator.evaluate(Run(outputs={}), example_of("x"))
    assert "run.outputs is empty" in empty.error
    no_reference = evaluator.evaluate(run_of("x"), Example(inputs={}, outputs=None))
    assert "is empty" in no_reference.error


def test_a_failed_target_is_reported_as_such(run_of: Any, example_of: Any) -> None:
    failed = Run(outputs=None, error="ZeroDivisionError: division by zero")
    result = ExactMatchEvaluator().evaluate(failed, example_of("x"))
    assert result.score is None and "the target failed" in result.error
    assert "ZeroDivisionError" in result.error


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain", "plain"),
        (None, ""),
        ({"role": "assistant", "content": "hi"}, "hi"),
        ([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}], "a\nb"),
        (42, "42"),
        (True, "true"),
        ({"b": 1, "a": "é"}, '{"a": "é", "b": 1}'),
        ([1, 2], "[1, 2]"),
    ],
)
def test_as_text(value: object, text: str) -> None:
    assert as_text(value) == text


def _every_reference_evaluator() -> list[Any]:
    from assay.embeddings import OpenAIEmbeddings
    from assay.evaluators import (
        BleuEvaluator,
        EmbeddingDistanceEvaluator,
        JsonEqualityEvaluator,
        JsonValidityEvaluator,
        RegexEvaluator,
        RougeEvaluator,
        StringDistanceEvaluator,
    )

    unreachable = OpenAIEmbeddings("never-called", base_url="http://127.0.0.1:9/v1")
    return [
        ExactMatchEvaluator(output_key="answer"),
        RegexEvaluator("x", output_key="answer"),
        StringDistanceEvaluator(output_key="answer"),
        JsonValidityEvaluator(output_key="answer"),
        JsonEqualityEvaluator(output_key="answer"),
        BleuEvaluator(output_key="answer"),
        RougeEvaluator(output_key="answer"),
        EmbeddingDistanceEvaluator(embeddings=unreachable, output_key="answer"),
    ]


@pytest.mark.parametrize("evaluator", _every_reference_evaluator(), ids=lambda e: type(e).__name__)
def test_every_evaluator_reports_a_missing_key_as_an_error(
    evaluator: Any, run_of: Any, example_of: Any
) -> None:
    result = evaluator.evaluate(run_of(text="x"), example_of(answer="x"))
    assert result.score is None
    assert result.error == (
        "EvaluatorInputError: run.outputs has no key 'answer' (its keys: 'text'); "
        "set output_key= to one of them"
    )
