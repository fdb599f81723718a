"""A result whose number sits in ``value`` is warned about once, when it is made (as
LangSmith does), not again each time a store reads it back: a store of many such rows
would otherwise write a line per row to stderr on every read."""

from __future__ import annotations

import logging

import pytest

from assay import Client, evaluate

WARNING = "Numeric values should be provided in the 'score' field"


def warnings_in(caplog: pytest.LogCaptureFixture) -> int:
    return sum(WARNING in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("store_url", ["sqlite", "postgres"], indirect=True)
def test_a_numeric_value_is_warned_about_when_made_not_when_read_back(
    any_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    data = [{"inputs": {"q": i}, "outputs": {"a": i}} for i in range(5)]
    with caplog.at_level(logging.WARNING):
        evaluate(
            lambda inputs: inputs,
            data=data,
            evaluators=[lambda outputs: {"key": "size", "value": 5}],
            client=any_client,
            experiment="valued",
            progress=False,
        )
    assert warnings_in(caplog) >= 5
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        rows = list(any_client.read_experiment("valued"))
        stored = any_client.store.get_experiment(name="valued")
        assert stored is not None
        again = any_client.store.load_rows(stored)
    assert len(rows) == 5 and [r.value for row in again for r in row.results] == [5] * 5
    assert warnings_in(caplog) == 0
