"""``evaluate`` as LangSmith code calls it, round three: pairwise ``randomize_order`` and the
re-score report on stderr."""

from __future__ import annotations

import random
from typing import Any

import pytest

from assay import Client, evaluate

DATA = [{"inputs": {"x": i}, "outputs": {"y": i}} for i in range(24)]


def _two_experiments(client: Client) -> None:
    evaluate(lambda inputs: {"y": inputs["x"]}, data=DATA, client=client, experiment="right")
    evaluate(lambda inputs: {"y": -1}, data=DATA, client=client, experiment="wrong")


def test_randomize_order_shows_the_runs_in_both_orders_and_keeps_the_scores_right(client: Client) -> None:
    _two_experiments(client)
    seen: list[tuple[Any, ...]] = []

    def prefers_right(runs: list[Any], example: Any) -> dict[str, Any]:
        correct = [run.outputs["y"] == example.outputs["y"] for run in runs]
        seen.append(tuple(correct))
        return {"key": "right", "scores": {run.id: float(c) for run, c in zip(runs, correct, strict=True)}}

    random.seed(7)
    compared = evaluate(("right", "wrong"), evaluators=[prefers_right], client=client, randomize_order=True)
    assert {(True, False), (False, True)} <= set(seen), seen  # both orders were shown
    right, wrong = (client.read_project(project_name=n).id for n in ("right", "wrong"))
    assert len(compared.records) == len(DATA)
    for record in compared.records:
        assert record.error is None, record.error
        assert record.scores == {str(right): 1.0, str(wrong): 0.0}
        assert set(record.metadata["presented_order"]) == {str(right), str(wrong)}

    seen.clear()
    evaluate(("right", "wrong"), evaluators=[prefers_right], client=client)
    assert set(seen) == {(True, False)}  # without it, always the order given


def test_randomize_order_is_refused_where_there_is_nothing_to_compare(client: Client) -> None:
    with pytest.raises(ValueError, match="comparing two experiments"):
        evaluate(lambda inputs: inputs, data=DATA[:1], client=client, randomize_order=True)


def test_the_rescore_report_goes_to_stderr(client: Client, capsys: pytest.CaptureFixture[str]) -> None:
    evaluate(lambda inputs: {"y": inputs["x"]}, data=DATA[:3], client=client, experiment="scored")
    capsys.readouterr()
    evaluate("scored", evaluators=[lambda outputs: 1], client=client)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "3 rows" in captured.err
