"""A finished row is prepared as its plain fields, pickled (encoded later, by the run's
writer or the SQLite writer process), or encoded at once when its values are not plain
data; either way the stored texts are the ones the store has always written, and they
are a snapshot of the row as it finished."""

from __future__ import annotations

import enum
import math
import uuid
from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.schemas import EvaluationResult, Example, Run
from assay.store import _codec as codec
from assay.store import _row_text
from assay.store._json import dumps, loads, safe_repr
from assay.store.records import ExperimentRow

EXPERIMENT = "0193a4b0-0000-7000-8000-000000000001"
RUN = "0193a4b0-0000-7000-8000-0000000000aa"
EXAMPLE = uuid.UUID("0193a4b0-0000-7000-8000-0000000000ee")
START = datetime(2026, 12, 5, 19, 30, 1, 250000, tzinfo=timezone.utc)


class Color(enum.IntEnum):
    RED = 1


class Opaque:
    def __repr__(self) -> str:
        return "<opaque \ud800>"


def _row(
    outputs: Any, *, start: datetime = START, value: Any = None, children: list[Run] | None = None
) -> ExperimentRow:
    run = Run(
        inputs={"x": 1},
        outputs=outputs,
        start_time=start,
        end_time=start + timedelta(milliseconds=12),
        extra={"repetition": 2},
        child_runs=children or [],
    )
    results = [
        EvaluationResult(key="exact", score=True),
        EvaluationResult(key="close", score=0.5, value=value, comment="nul \x00 and \ud83d"),
    ]
    return ExperimentRow(
        run=run, example=Example(id=EXAMPLE, inputs={"x": 1}), repetition=2, position=7, results=results
    )


def test_a_plain_row_is_stored_as_the_texts_the_store_has_always_written() -> None:
    prepared = codec.prepare(EXPERIMENT, RUN, _row({"answer": [1.5, None, "é"]}))
    assert isinstance(prepared, bytes)  # plain: left to the writer to encode
    run, results = codec.encoded(prepared)
    example = str(EXAMPLE)
    assert run == (
        RUN,
        EXPERIMENT,
        example,
        2,
        7,
        "target",
        "chain",
        '{"x":1}',
        '{"answer":[1.5,null,"é"]}',
        None,
        "2026-12-05T19:30:01.250000+00:00",
        "2026-12-05T19:30:01.262000+00:00",
        12.0,
        None,
        '{"repetition":2}',
        1,  # a score below 1: a failed row
    )
    assert results == [
        (EXPERIMENT, RUN, "exact", 1.0, None, None, None, None, None, None, None, "bool", example, 2, 7),
        (
            EXPERIMENT,
            RUN,
            "close",
            0.5,
            None,
            None,
            "nul \x00 and \\ud83d",
            None,
            None,
            None,
            None,
            None,
            example,
            2,
            7,
        ),
    ]


ODD = [
    OrderedDict(a=1),
    Color.RED,
    np.float64(0.25),
    np.arange(3),
    datetime(2026, 1, 1, tzinfo=timezone.utc),
    Opaque(),
    {"deep": [OrderedDict(b=2)]},
]
PLAIN = [
    {1: "int key", "$float": "looks like a tag"},
    (1, 2.5, None),
    {frozenset({1, 2}), "s"},
    b"\x00\xff",
    bytearray(b"\x00\xff"),  # pickled as itself; stored as bytes are
    complex(1, -0.0),
    math.nan,
    10**400,
    "\ud800 \x00",
]


@pytest.mark.parametrize("value", ODD, ids=lambda v: type(v).__name__)
def test_a_value_that_is_not_plain_data_is_encoded_at_once_as_before(value: Any) -> None:
    row = _row({"v": value}, value=value)
    prepared = codec.prepare(EXPERIMENT, RUN, row)
    assert isinstance(prepared, tuple)  # nothing the writer process could not read back
    assert prepared == codec.encode_row(EXPERIMENT, RUN, row)
    assert prepared[0][8] == dumps({"v": value})


@pytest.mark.parametrize("value", PLAIN, ids=lambda v: type(v).__name__)
def test_plain_values_reach_the_encoder_unchanged(value: Any) -> None:
    row = _row({"v": value}, value=value)
    prepared = codec.prepare(EXPERIMENT, RUN, row)
    assert isinstance(prepared, bytes)
    (run, results), (run_here, results_here) = codec.encoded(prepared), codec.encode_row(EXPERIMENT, RUN, row)
    if isinstance(value, set):  # a set rebuilt by unpickling may list its items in another order
        assert loads(run[8]) == loads(run_here[8]) and loads(results[1][4]) == loads(results_here[1][4])
        run, run_here = run[:8] + run[9:], run_here[:8] + run_here[9:]
        results, results_here = results[:1], results_here[:1]
    assert (run, results) == (run_here, results_here)


def test_a_prepared_row_is_a_snapshot_of_the_row_as_it_finished() -> None:
    outputs: dict[str, Any] = {"seen": [1]}
    row = _row(outputs, value={"kept": True})
    prepared = codec.prepare(EXPERIMENT, RUN, row)
    outputs["seen"].append(2)  # a target that keeps and edits what it returned
    row.results[1].value["kept"] = False
    run, results = codec.encoded(prepared)
    assert run[8] == '{"seen":[1]}'
    assert results[1][4] == '{"kept":true}'


def test_times_outside_utc_keep_their_offset() -> None:
    paris = timezone(timedelta(hours=1))
    run, _ = codec.encoded(codec.prepare(EXPERIMENT, RUN, _row({}, start=START.astimezone(paris))))
    assert run[10:13] == ("2026-12-05T20:30:01.250000+01:00", "2026-12-05T20:30:01.262000+01:00", 12.0)


def test_child_runs_that_cannot_be_dumped_make_an_errored_run_row_not_a_failed_experiment() -> None:
    class Broken(Run):
        def model_dump(self, **kwargs: Any) -> dict[str, Any]:
            raise RuntimeError("cannot dump")

    run, results = codec.encoded(codec.prepare(EXPERIMENT, RUN, _row({}, children=[Broken()])))
    assert run[9] is not None and "RuntimeError" in run[9] and "cannot dump" in run[9]
    assert run[7] is None and run[8] is None  # the run's values are not stored, the reason is
    assert [result[2] for result in results] == ["exact", "close"]  # the results are kept


@given(st.datetimes(timezones=st.just(timezone.utc)))
def test_a_utc_time_is_written_as_isoformat_writes_it(moment: datetime) -> None:
    encoder = _row_text.RowEncoder(dumps, safe_repr)
    assert encoder.instant_text(_row_text.instant(moment)) == moment.isoformat()
    assert encoder.instant_text(_row_text.instant(moment + timedelta(microseconds=1))) == (
        (moment + timedelta(microseconds=1)).isoformat()
    )


@pytest.mark.parametrize(
    "extra",
    [
        {"repetition": 0},
        {"repetition": 2**63 - 1},
        {"repetition": 2**63},
        {"repetition": -1},
        {"repetition": True},
    ],
    ids=repr,
)
def test_a_run_extra_is_written_as_dumps_writes_it(extra: dict[str, Any]) -> None:
    encoder = _row_text.RowEncoder(dumps, safe_repr)
    assert encoder.extra_text(extra) == dumps(extra)
    assert encoder.extra_text({**extra, "tags": ["t"]}) == dumps({**extra, "tags": ["t"]})
