"""Typos fail early: unknown options of built-in evaluators, near-miss parameter names."""

from __future__ import annotations

import re

import pytest

from assay import Client, EvaluatorSignatureError, evaluate
from assay.evaluation._binding import bind_row_evaluator, bind_summary_evaluator
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


def test_near_miss_parameter_names_are_refused_before_any_call() -> None:
    """``def correct(output, reference)`` used to bind as the legacy (run, example) form and
    score 0 on every row (a Run never equals an Example), with no error to say why."""
    calls: list[object] = []

    def correct(output, reference):  # type: ignore[no-untyped-def]
        return output == reference

    with pytest.raises(EvaluatorSignatureError) as caught:
        evaluate(
            lambda inputs: calls.append(inputs) or {"answer": 1},
            data=[{"inputs": {"q": 1}, "outputs": {"answer": 1}}],
            evaluators=[correct],
            client=Client("sqlite://"),
            progress=False,
        )
    message = str(caught.value)
    assert "'output' (did you mean 'outputs'?)" in message
    assert "'reference' (did you mean 'reference_outputs'?)" in message
    assert "name them (run, example)" in message
    assert calls == []  # refused before the target ran


@pytest.mark.parametrize(
    "params, meant",
    [
        ("prediction, expected", "'expected' (did you mean 'reference_outputs'?)"),
        ("input, reference_output", "'input' (did you mean 'inputs'?)"),
        ("outputz, reference_outputs_", "'outputz' (did you mean 'outputs'?)"),
    ],
)
def test_each_near_miss_names_the_parameter_it_meant(params: str, meant: str) -> None:
    namespace: dict = {}
    exec(f"def check({params}):\n    return 1\n", namespace)
    with pytest.raises(EvaluatorSignatureError, match=re.escape(meant)):
        bind_row_evaluator(namespace["check"])


def test_summary_evaluators_are_held_to_the_same_rule() -> None:
    def f1(predictions, references):  # type: ignore[no-untyped-def]
        return 1.0

    with pytest.raises(EvaluatorSignatureError, match="'predictions' \\(did you mean 'outputs'\\?\\)"):
        bind_summary_evaluator(f1)
    bind_summary_evaluator(lambda runs, examples: 1.0)  # the legacy summary form


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


def test_unknown_names_in_the_python_api_suggest_the_closest() -> None:
    from assay.errors import AssayError

    client = Client("sqlite://")
    client.create_dataset("Toxic queries")
    evaluate(lambda inputs: {"a": 1}, data=[{"x": 1}], client=client, experiment="nightly-1", progress=False)
    data = [{"inputs": {"a": 1}}]
    with pytest.raises(AssayError, match="'exact_mach' \\(did you mean 'exact_match'"):
        evaluate(lambda inputs: inputs, data=data, evaluators=["exact_mach"], client=client)
    with pytest.raises(AssayError, match="'Toxic querie' \\(did you mean 'Toxic queries'\\?\\)"):
        client.read_dataset(dataset_name="Toxic querie")
    with pytest.raises(AssayError, match="'Toxic querie' \\(did you mean 'Toxic queries'\\?\\)"):
        evaluate(lambda inputs: inputs, data="Toxic querie", client=client)
    with pytest.raises(AssayError, match="'nightly-2' \\(did you mean 'nightly-1'\\?\\)"):
        client.read_experiment("nightly-2")
