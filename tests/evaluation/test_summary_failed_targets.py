"""What a summary evaluator sees of a row whose target failed, as LangSmith gives it: ``{}``
in ``outputs`` (so LangSmith code such as ``o.get("answer")`` keeps working), and the run
itself (``runs[i].outputs is None``, ``runs[i].error`` set) to tell it from a target that
returned ``{}``. The same whether the rows were kept by the run or are read back from the
store (a re-score), on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import assay
from assay import Client


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    if inputs["x"] == 2:
        raise RuntimeError("the model is down")
    return {} if inputs["x"] == 3 else {"y": inputs["x"]}


DATA = [{"inputs": {"x": i}, "outputs": {"y": i}} for i in range(5)]


def test_a_summary_tells_failed_targets_from_empty_answers(any_client: Client) -> None:
    seen: dict[str, list[Any]] = {}

    def answered(outputs: list[Any], runs: list[Any], reference_outputs: list[Any]) -> dict[str, Any]:
        seen.setdefault("outputs", []).append(list(outputs))
        seen.setdefault("runs", []).append([(run.outputs, run.error) for run in runs])
        hits = sum(o.get("y") == r["y"] for o, r in zip(outputs, reference_outputs))  # LangSmith style
        return {"key": "answered", "score": sum(run.error is None for run in runs) / len(runs), "value": hits}

    results = assay.evaluate(
        target, data=DATA, summary_evaluators=[answered], client=any_client, experiment="e"
    )
    rescored = assay.evaluate_existing("e", summary_evaluators=[answered], client=any_client)
    outputs = [{"y": 0}, {"y": 1}, {}, {}, {"y": 4}]
    assert seen["outputs"] == [outputs, outputs]  # kept by the run, then read from the store
    failed = "RuntimeError: the model is down"
    runs = [({"y": 0}, None), ({"y": 1}, None), (None, failed), ({}, None), ({"y": 4}, None)]
    assert seen["runs"] == [runs, runs]
    for done in (results, rescored):
        (result,) = done.summary_results.results
        assert (result.score, result.value, result.error) == (0.8, 3, None)
