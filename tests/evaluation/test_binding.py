"""Every evaluator form binds, and a bad signature fails before the target runs."""

from __future__ import annotations

import functools

import pytest

from assay import Client, EvaluatorSignatureError, evaluate
from assay.evaluation import BaseEvaluator, EvaluationResult, RunEvaluator, run_evaluator
from assay.evaluation import EvaluatorSignatureError as FromEvaluation
from assay.evaluation.evaluator import BaseEvaluator as FromEvaluator
from assay.schemas import Example, Run


def double(inputs: dict) -> dict:
    return {"y": inputs["x"] * 2}


def scores(results, key: str) -> list:
    return [next(r for r in row["evaluation_results"]["results"] if r.key == key) for row in results]


def test_named_parameters_are_bound_from_the_row(client: Client, examples: list[dict]) -> None:
    seen: list[tuple] = []

    def everything(run, example, inputs, outputs, reference_outputs, metadata) -> bool:
        seen.append((run.outputs, example.inputs, inputs, outputs, reference_outputs, metadata))
        return outputs["y"] == reference_outputs["y"]

    results = evaluate(double, data=examples, evaluators=[everything], client=client)
    assert [r.score for r in scores(results, "everything")] == [True] * 6
    run_outputs, example_inputs, inputs, outputs, reference, metadata = seen[0]
    assert inputs is example_inputs and outputs == run_outputs == {"y": outputs["y"]}
    assert reference == {"y": 2 * inputs["x"]} and metadata == {"parity": inputs["x"] % 2}


def test_subset_and_any_order_of_names(client: Client, examples: list[dict]) -> None:
    def subset(reference_outputs, inputs) -> float:
        return reference_outputs["y"] - inputs["x"]

    results = evaluate(double, data=examples, evaluators=[subset], client=client)
    assert [r.score for r in scores(results, "subset")] == [float(i) for i in range(6)]


def test_legacy_positional_run_example_form(client: Client, examples: list[dict]) -> None:
    def legacy(r: Run, e: Example | None) -> dict:
        return {"key": "legacy", "score": r.outputs["y"] == e.outputs["y"]}

    results = evaluate(double, data=examples, evaluators=[legacy], client=client)
    assert all(r.score is True for r in scores(results, "legacy"))


async def test_async_function_evaluator(client: Client, examples: list[dict]) -> None:
    async def async_check(outputs, reference_outputs) -> bool:
        return outputs == reference_outputs

    results = evaluate(double, data=examples, evaluators=[async_check], client=client)
    assert all(r.score is True for r in scores(results, "async_check"))


def test_base_evaluator_subclasses_sync_and_async(client: Client, examples: list[dict]) -> None:
    class Sync(BaseEvaluator):
        def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
            return EvaluationResult(key=self.name, score=run.outputs["y"] / 10)

    class Async(BaseEvaluator):
        async def _aevaluate(self, run: Run, example: Example | None = None) -> float:
            return 1.0

    sync, asynchronous = Sync(name="tenths", threshold=3), Async()
    assert sync.config == {"threshold": 3} and asynchronous.name == "Async"
    results = evaluate(double, data=examples, evaluators=[sync, asynchronous], client=client)
    assert [r.score for r in scores(results, "tenths")] == [2 * i / 10 for i in range(6)]
    assert all(r.score == 1.0 for r in scores(results, "Async"))
    assert FromEvaluator is BaseEvaluator


def test_base_evaluator_public_evaluate_catches_and_keeps_traceback() -> None:
    class Broken(BaseEvaluator):
        def _evaluate(self, run: Run, example: Example | None = None) -> float:
            raise KeyError("text")

    result = Broken(name="broken").evaluate(Run(outputs={}), Example())
    assert result.key == "broken" and result.score is None
    assert result.error == "KeyError: 'text'"
    assert "raise KeyError" in result.metadata["traceback"]


def test_object_with_evaluate_run_and_run_evaluator_decorator(client: Client, examples: list[dict]) -> None:
    class Plain:
        name = "plain"

        def evaluate_run(self, run: Run, example: Example | None = None) -> EvaluationResult:
            return EvaluationResult(key="plain", score=1)

    @run_evaluator
    def decorated(run: Run, example: Example) -> dict:
        return {"key": "decorated", "score": 0.5}

    assert isinstance(decorated, RunEvaluator)
    results = evaluate(double, data=examples, evaluators=[Plain(), decorated], client=client)
    assert all(r.score == 1 for r in scores(results, "plain"))
    assert all(r.score == 0.5 for r in scores(results, "decorated"))


def test_kwargs_and_partial(client: Client, examples: list[dict]) -> None:
    def flexible(**kwargs) -> bool:
        return set(kwargs) == {"run", "example", "inputs", "outputs", "reference_outputs", "metadata"}

    def threshold(outputs, limit) -> bool:
        return outputs["y"] < limit

    evaluators = [flexible, functools.partial(threshold, limit=5)]
    results = evaluate(double, data=examples, evaluators=evaluators, client=client)
    assert all(r.score is True for r in scores(results, "flexible"))
    assert [r.score for r in scores(results, "threshold")] == [True, True, True, False, False, False]


def test_bad_signature_is_reported_before_any_target_call(client: Client, examples: list[dict]) -> None:
    calls: list[dict] = []

    def target(inputs: dict) -> dict:
        calls.append(inputs)
        return inputs

    def wrong(prediction, reference_outputs):
        return True

    with pytest.raises(EvaluatorSignatureError) as caught:
        evaluate(target, data=examples, evaluators=[wrong], client=client)
    message = str(caught.value)
    assert "'wrong'" in message and "wrong(prediction, reference_outputs)" in message
    assert "'prediction'" in message
    for name in ("run", "example", "inputs", "outputs", "reference_outputs", "metadata"):
        assert name in message
    assert calls == [] and client.list_experiments() == []
    assert FromEvaluation is EvaluatorSignatureError


def test_function_taking_no_known_name_is_refused(client: Client, examples: list[dict]) -> None:
    def nothing_known(x=1):
        return True

    with pytest.raises(EvaluatorSignatureError, match="none of the accepted parameter names"):
        evaluate(double, data=examples, evaluators=[nothing_known], client=client)


def test_unknown_string_name_is_refused_up_front(client: Client, examples: list[dict]) -> None:
    with pytest.raises(ValueError, match="unknown evaluator name 'no_such_metric'"):
        evaluate(double, data=examples, evaluators=["no_such_metric"], client=client)
