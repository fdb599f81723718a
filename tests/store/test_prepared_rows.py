"""A row as the run prepares it for the writer: its latency is the one a ``timedelta``
gives, to the last bit, whatever its times; what is stored of it, a value met twice or a
cycle in it included, is what encoding the row at once stores."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assay import Client
from assay.schemas import EvaluationResult, Example, Run
from assay.store import _codec as codec
from assay.store.records import ExperimentRecord, ExperimentRow

zones = st.sampled_from(
    [timezone.utc, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
)
times = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=zones)


def _row(start: datetime, end: datetime | None, outputs: Any = None) -> ExperimentRow:
    run = Run(inputs={"x": 1}, outputs=outputs, start_time=start, end_time=end)
    example = Example(id=uuid.uuid4(), inputs={"x": 1})
    results = [EvaluationResult(key="k", score=1.0)]
    return ExperimentRow(run=run, example=example, repetition=0, position=0, results=results)


@settings(max_examples=300, deadline=None)
@given(times, st.one_of(st.none(), times))
def test_the_latency_is_the_timedeltas_to_the_last_bit(start: datetime, end: datetime | None) -> None:
    fields = codec.row_fields("e", "r", _row(start, end))
    expected = None if end is None else (end - start).total_seconds() * 1000.0
    assert fields[12] == expected and type(fields[12]) is type(expected)
    if end is not None and start.tzinfo is timezone.utc and end.tzinfo is timezone.utc:
        assert type(fields[10]) is int and type(fields[11]) is int  # the path from the integers


@settings(max_examples=500, deadline=None)
@given(st.uuids(allow_nil=True))
def test_an_ids_text_is_strs(value: uuid.UUID) -> None:
    assert codec.id_text(value) == str(value)


def _experiment(client: Client) -> ExperimentRecord:
    record = ExperimentRecord(name="prepared")
    client.store.create_experiment(record)
    return record


def test_a_value_met_twice_or_a_cycle_is_stored_as_encoding_the_row_at_once_stores_it(client: Client) -> None:
    """What the writer stores of a prepared row is what encoding the row in the run's
    process gives (``encode_row``), a value met twice included (pickled twice) and a
    cycle (refused by the pickler, so encoded at once: cut where the JSON stops)."""
    record = _experiment(client)
    store = client.store
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    shared = {"deep": [1, 2, {"three": 3}]}
    cyclic: dict[str, Any] = {"a": 1}
    cyclic["self"] = cyclic
    rows = [_row(start, start, {"one": shared, "two": shared}), _row(start, start, cyclic)]
    rows[1].position = 1
    prepared = [store.prepare_row(record.id, row) for row in rows]
    assert type(prepared[0]) is bytes, "plain data goes to the writer pickled"
    for row, item in zip(rows, prepared):
        assert codec.encoded(item) == codec.encode_row(str(record.id), str(row.run.id), row)
    store.write_prepared(prepared)
    stored = store.get_experiment(id=record.id)
    assert stored is not None
    read = {row.position: row for row in store.load_rows(stored)}
    assert read[0].run.outputs == {"one": shared, "two": shared} and read[0].run.error is None
    assert read[1].run.outputs is not None and read[1].run.outputs["a"] == 1
