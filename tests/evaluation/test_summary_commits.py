"""The end of a run commits only what it changes: a new experiment without summary
evaluators has no summary results to replace (one write transaction, one fsync, less
at the end of every such run); one that has them, or a resumed one, replaces them."""

from __future__ import annotations

from typing import Any

import pytest

from assay import Client


@pytest.fixture
def client(any_client: Client) -> Client:
    return any_client


def _count(outputs: list[dict[str, Any]]) -> int:
    return len(outputs)


def test_only_runs_with_summaries_to_store_or_replace_write_them(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_type = type(client.store)
    replaced: list[list[Any]] = []
    original = store_type.replace_summary_results

    def replace(self: Any, experiment_id: Any, results: Any) -> None:
        replaced.append(list(results))
        original(self, experiment_id, results)

    monkeypatch.setattr(store_type, "replace_summary_results", replace)
    data = [{"x": i} for i in range(3)]
    plain = client.evaluate(lambda inputs: inputs, data=data, experiment="plain", progress=False)
    assert replaced == [] and plain.experiment.status == "completed"
    assert client.store.load_summary_results(plain.experiment.id) == []

    summed = client.evaluate(
        lambda inputs: inputs, data=data, summary_evaluators=[_count], experiment="summed", progress=False
    )
    assert [r.key for r in replaced[0]] == ["_count"]
    again = client.evaluate(
        lambda inputs: inputs,
        data=data,
        summary_evaluators=[_count],
        experiment="summed",
        resume=True,
        progress=False,
    )
    assert len(replaced) == 2 and again.experiment.id == summed.experiment.id
    assert [r.score for r in client.store.load_summary_results(summed.experiment.id)] == [3]

    client.evaluate(lambda inputs: inputs, data=data, experiment="plain", resume=True, progress=False)
    assert replaced[2:] == [[]]  # resumed: whatever it had is replaced, as before
