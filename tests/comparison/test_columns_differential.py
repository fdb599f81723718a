"""The stored-columns path of ``assay.compare`` gives the same ``Comparison`` as the SQL
path, on randomized experiments: repetitions, evaluator errors, failed targets (skipped
results), results without a score, metrics on one side only, examples on one side only,
a lower-is-better metric, 0/1 metrics and duplicated results on a row."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from columns_testdata import (
    LOWER,
    Cell,
    assert_same,
    by_sql,
    dataset,
    experiment,
    has_columns,
    stored_one_per_row,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assay
from assay.store.sqlite import SQLiteStore

KEYS = ["bin", "cont", LOWER]
_SCORE = {
    "bin": st.sampled_from([0.0, 1.0]),
    "cont": st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(-3, 3, allow_nan=False)),
    LOWER: st.sampled_from([0.0, 0.25, 0.5, 1.0]),
}


@st.composite
def cell(draw: Any, key: str, complete: bool) -> Cell:
    kinds = ["score"] * 6 + ["error", "value"] + ([] if complete else ["none", "dup"])
    kind = draw(st.sampled_from(kinds))
    if kind == "score":
        return float(draw(_SCORE[key]))
    if kind == "dup":
        return f"dup:{draw(_SCORE[key])},{draw(_SCORE[key])}"
    return None if kind == "none" else kind


@st.composite
def side(draw: Any, n: int, complete: bool) -> dict[tuple[int, int], tuple[bool, dict[str, Cell]]]:
    """``complete``: every example once, one result of each metric per row (the case the
    columns pair without reading their keys)."""
    repetitions = 1 if complete else draw(st.sampled_from([1, 1, 2, 3]))
    keys = KEYS if complete else draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=3, unique=True))
    present = [True] * n if complete else draw(st.lists(st.booleans(), min_size=n, max_size=n))
    rows = {}
    for position in range(n):
        if not present[position] and draw(st.booleans()):
            continue
        for repetition in range(repetitions):
            failed = draw(st.integers(0, 9)) == 0
            rows[(position, repetition)] = (failed, {key: draw(cell(key, complete)) for key in keys})
    return rows


@st.composite
def case(draw: Any) -> tuple[int, Any, Any, str, str, str]:
    n = draw(st.integers(2, 14))
    options = draw(st.sampled_from([("t", "t"), ("wilcoxon", "t"), ("t", "bca")]))
    status = draw(st.sampled_from(["completed", "completed", "failed"]))  # failed: built on first use
    complete = draw(st.sampled_from([True, False, False]))
    return n, draw(side(n, complete)), draw(side(n, complete)), options[0], options[1], status


def _one_per_row(rows: dict[tuple[int, int], tuple[bool, dict[str, Cell]]], key: str) -> bool:
    """Every row holds exactly one result of ``key`` (a failed target's is a skipped one)."""
    counts = [
        0 if cells.get(key) is None else 1 if failed or not str(cells[key]).startswith("dup:") else 2
        for failed, cells in rows.values()
    ]
    return bool(counts) and all(count == 1 for count in counts)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case())
def test_columns_and_sql_give_the_same_comparison(drawn: tuple[int, Any, Any, str, str, str]) -> None:
    n, rows_a, rows_b, test, interval, status = drawn
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "s.db")
        try:
            ds, examples = dataset(store, n)
            a = experiment(store, ds, examples, "a", rows_a)
            b = experiment(store, ds, examples, "b", rows_b, status=status)
            try:
                by_columns = assay.compare("a", "b", client=store, test=test, interval=interval)
            except assay.NotComparableError:
                with pytest.raises(assay.NotComparableError):
                    by_sql(store, a, b, test=test, interval=interval)
                return
            assert has_columns(store, a) and has_columns(store, b)  # the columns answered
            for record, rows in ((a, rows_a), (b, rows_b)):
                for key in KEYS:
                    assert stored_one_per_row(store, record, key) == _one_per_row(rows, key)
            assert_same(by_columns, by_sql(store, a, b, test=test, interval=interval))
        finally:
            store.close()
