"""Counts of failing rows and of a metric's range, read from the stored metric columns
when they answer exactly, else counted in SQL: either way the page's total is the
oracle's, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from both_backends import on_both_backends, reader_of_both  # noqa: F401 - fixtures: store, db
from ui_testdata import ERROR, LOWER, RowSpec, build_scored, fails, make_dataset, make_experiment, scored_rows

from assay.store import Store
from assay.store.read import failing, stored_counts
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.walk import Bound
from assay.ui import queries
from assay.ui.models import RowFilter

ROWS = 60
Row = dict[str, Any]  # per key its score, None (unscored) or ERROR; "target": the target's error


def _rows(seed: int) -> list[Row]:
    return scored_rows(seed, ROWS, digits=2)


def _build(store: Store, name: str, rows: list[Row]) -> None:
    build_scored(store, name, rows)


def _total(db: ReadOnlyDatabase, name: str, row_filter: RowFilter) -> tuple[int, list[int]]:
    experiment = queries.find_experiment(db, name)
    assert experiment is not None
    page = queries.row_page(db, experiment, row_filter, page=1, per_page=10)
    return page.total, [row.position for row in page.rows]


def _stored_failing(db: ReadOnlyDatabase, name: str, thresholds: dict[str, float | None]) -> int | None:
    experiment = queries.find_experiment(db, name)
    assert experiment is not None
    keys = ["ok", "leak", "sim"]
    spec = failing.failing(
        db, experiment.id, metric=None, worse_than=None, thresholds=thresholds, lower={"leak"}
    )
    stored = stored_counts.count_failing(db, experiment.id, keys, spec.tests)
    counted = failing.count_failing(db, experiment.id, keys, spec)
    assert stored is None or stored == counted, "the columns and the index ranges disagree"
    return stored


THRESHOLDS: list[dict[str, float | None]] = [
    {},
    {"sim": 0.5},
    {"ok": None, "leak": None},
    {"sim": 0.95, "leak": None},
]


@pytest.mark.parametrize("thresholds", THRESHOLDS)
def test_failing_rows_are_counted_from_the_columns_as_the_oracle_counts_them(
    store: Store, db: ReadOnlyDatabase, thresholds: dict[str, float | None]
) -> None:
    rows = _rows(seed=3)
    _build(store, "exp", rows)
    expected = [i for i, row in enumerate(rows) if fails(row, thresholds)]
    assert 0 < len(expected) < ROWS
    assert _total(db, "exp", RowFilter(failed=True, thresholds=thresholds)) == (len(expected), expected[:10])
    assert _stored_failing(db, "exp", thresholds) == len(expected)  # answered from the columns


@pytest.mark.parametrize(("key", "bounds"), [("sim", [Bound("<", 0.5)]), ("leak", [Bound(">", 0.5)])])
def test_a_metric_range_is_counted_from_the_columns_as_the_oracle_counts_it(
    store: Store, db: ReadOnlyDatabase, key: str, bounds: list[Bound]
) -> None:
    rows = _rows(seed=5)
    _build(store, "exp", rows)
    scores = [row.get(key) for row in rows]
    expected = [
        i
        for i, score in enumerate(scores)
        if score not in (None, ERROR)
        and all(score < b.value if b.op == "<" else score > b.value for b in bounds)
    ]
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    stored = stored_counts.count_within(db, experiment.id, key, bounds)
    assert stored == len(expected)
    # "worse than 0.5" of the lower-is-better leak is "above 0.5", as the bound says
    row_filter = RowFilter(metric=key, below=0.5) if key == "sim" else RowFilter(metric=key, worse_than=0.5)
    assert _total(db, "exp", row_filter) == (len(expected), expected[:10])


def test_columns_that_would_count_differently_are_not_used(store: Store, db: ReadOnlyDatabase) -> None:
    """An errored result that kept a score, a row without a metric, a target failure whose
    evaluator still scored: the columns would count those rows differently from the
    SQL, so the count is the SQL's, and the totals stay the oracle's."""
    cases = {
        "leftover": {"target": None, "ok": 1, "leak": 0, "sim": 0.2, "leftover": True},
        "ragged": {"target": None, "ok": 1, "leak": 0},  # no sim on this row
        "scored": {"target": "RuntimeError: broke", "ok": 0, "leak": 0, "sim": 0.3},
    }
    for name, odd in cases.items():
        rows = [*_rows(seed=7), odd]
        if name == "leftover":
            _build_leftover(store, name, rows)
        else:
            _build(store, name, rows)
        expected = [i for i, row in enumerate(rows) if fails(row, {})]
        assert _total(db, name, RowFilter(failed=True)) == (len(expected), expected[:10]), name
        assert _stored_failing(db, name, {}) is None, name
        experiment = queries.find_experiment(db, name)
        assert experiment is not None
        if name != "scored":
            assert stored_counts.count_within(db, experiment.id, "sim", [Bound("<", 0.5)]) is None, name


def _build_leftover(store: Store, name: str, rows: list[Row]) -> None:
    """As ``_build``, the last row's sim result an error that kept its score."""
    from assay.schemas import EvaluationResult

    dataset, examples = make_dataset(store, name, [{"inputs": {"i": i}} for i in range(len(rows))])
    specs = [
        RowSpec(
            outputs={"o": i},
            error=row["target"],
            scores={k: row[k] for k in ("ok", "leak", "sim") if k in row},
            info={"leak": LOWER},
        )
        for i, row in enumerate(rows)
    ]
    specs[-1].scores.pop("sim")
    original = store.write_rows

    def write_rows(experiment_id: Any, batch: list[Any]) -> None:
        for stored_row in batch:
            if stored_row.position == len(rows) - 1:
                stored_row.results.append(
                    EvaluationResult(key="sim", score=0.2, error="TimeoutError: kept a score")
                )
        original(experiment_id, batch)

    store.write_rows = write_rows  # type: ignore[method-assign]
    try:
        make_experiment(store, name, dataset, examples, specs, figures=True)
    finally:
        del store.write_rows
    rows[-1]["sim"] = ERROR  # the oracle: an errored result fails its row, its score never counts
