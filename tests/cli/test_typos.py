"""Typos fail early: unknown options of built-in evaluators, near-miss parameter names."""

from __future__ import annotations

import pytest

from assay import Client, evaluate
from assay.evaluators.code import CodeCorrectnessEvaluator
from assay.evaluators.text.string import ExactMatchEvaluator


def test_builtin_evaluators_refuse_unknown_keyword_arguments() -> None:
    with pytest.raises(TypeError) as caught:
        CodeCorrectnessEvaluator(timeout=5, fnc_name="f")
    message = str(caught.value)
    assert "'timeout' (did you mean 'execution_timeout'?)" in message
    assert "'fnc_name' (did you mean 'func_name'?)" in message
    accepted = message.split("it accepts: ", 1)[1].split(", ")
    assert {"execution_timeout", "func_name", "abs_tolerance"} <= set(accepted)
    evaluator = CodeCorrectnessEvaluator(execution_timeout=5, func_name="f")  # the seed's names
    assert evaluator.execution_timeout == 5 and evaluator.expected_func_name == "f"
    with pytest.raises(TypeError, match="'ignorecase' \\(did you mean 'ignore_case'\\?\\)"):
        ExactMatchEvaluator(ignorecase=True)
    assert ExactMatchEvaluator(ignore_case=True, output_key="answer", name="em").name == "em"


def test_user_subclasses_keep_their_free_form_options() -> None:
    from assay.evaluation import BaseEvaluator

    class Mine(BaseEvaluator):
        def _evaluate(self, run, example=None):  # type: ignore[no-untyped-def]
            return 1

    assert Mine(anything="goes").config == {"anything": "goes"}


def test_a_near_miss_legacy_function_says_why_it_failed() -> None:
    def correct(output, reference):  # type: ignore[no-untyped-def]
        return output["answer"] == reference["answer"]

    results = evaluate(
        lambda inputs: {"answer": 1},
        data=[{"inputs": {"q": 1}, "outputs": {"answer": 1}}],
        evaluators=[correct],
        client=Client("sqlite://"),
        progress=False,
    )
    error = results.rows[0].results[0].error or ""
    assert "called the legacy way, with a Run and an Example" in error
    assert "did you mean (outputs, reference_outputs)?" in error
    assert "Accepted parameter names: run, example, inputs, outputs, reference_outputs, metadata" in error
    assert "'Run' object is not subscriptable" in error


def test_the_legacy_form_itself_still_works() -> None:
    def correct(root_run, ex):  # type: ignore[no-untyped-def]
        return root_run.outputs["answer"] == ex.outputs["answer"]

    results = evaluate(
        lambda inputs: {"answer": 1},
        data=[{"inputs": {"q": 1}, "outputs": {"answer": 1}}],
        evaluators=[correct],
        client=Client("sqlite://"),
        progress=False,
    )
    assert results.aggregate["correct"].mean == 1.0
