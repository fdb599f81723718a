"""Failing rows read each metric with its direction: 0/1 metrics fail at their worst value,
continuous ones only by a threshold the user sets."""

from __future__ import annotations

import pytest
from ui_testdata import RowSpec, make_dataset, make_experiment

from assay.store import Store
from assay.store.read.database import ReadOnlyDatabase
from assay.ui import queries
from assay.ui.errors import BadRequest
from assay.ui.models import RowFilter

LOWER = {"direction": "lower"}
# per row: ok (0/1, higher better), leaked (0/1, lower better), similarity, distance (lower)
ROWS = [
    (1, 0, 0.95, 0.10),
    (0, 0, 0.99, 0.05),  # ok failed
    (1, 1, 0.90, 0.20),  # leaked: 1 is the worst value of a lower-is-better metric
    (1, 0, 0.40, 0.70),  # poor similarity and distance, but continuous: no default failure
    (1, 0, 1.00, 0.00),
]


@pytest.fixture
def db(store: Store) -> ReadOnlyDatabase:
    dataset, examples = make_dataset(store, "f", [{"inputs": {"i": i}} for i in range(len(ROWS))])
    specs = [
        RowSpec(
            outputs={"o": i},
            scores={"ok": ok, "leaked": leaked, "similarity": sim, "distance": dist},
            info={"leaked": LOWER, "distance": LOWER},
        )
        for i, (ok, leaked, sim, dist) in enumerate(ROWS)
    ]
    make_experiment(store, "exp", dataset, examples, specs)
    return ReadOnlyDatabase(store)


def _positions(db: ReadOnlyDatabase, row_filter: RowFilter) -> list[int]:
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    page = queries.row_page(db, experiment, row_filter, page=1, per_page=50)
    return [row.position for row in page.rows]


def test_binary_metrics_fail_at_their_worst_value_and_continuous_ones_do_not(db: ReadOnlyDatabase) -> None:
    # The old rule (any score below 1) marked every row but the last as failed.
    assert _positions(db, RowFilter(failed=True)) == [1, 2]


def test_a_threshold_is_read_with_the_metric_direction(db: ReadOnlyDatabase) -> None:
    assert _positions(db, RowFilter(failed=True, metric="similarity", worse_than=0.5)) == [1, 2, 3]
    assert _positions(db, RowFilter(metric="similarity", worse_than=0.92)) == [2, 3]
    assert _positions(db, RowFilter(metric="distance", worse_than=0.15)) == [2, 3]  # above: worse
    # A threshold on a 0/1 metric replaces its default (here: leaked never counts as failing).
    assert _positions(db, RowFilter(failed=True, metric="leaked", worse_than=1.0)) == [1]


def test_a_threshold_needs_a_metric(db: ReadOnlyDatabase) -> None:
    with pytest.raises(BadRequest, match="'worse_than' filter needs a 'metric'"):
        _positions(db, RowFilter(worse_than=0.5))


def test_the_metrics_table_shows_direction_method_and_skipped(db: ReadOnlyDatabase) -> None:
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    stats = {m.key: m for m in queries.metric_stats(db, experiment.id)}
    assert stats["leaked"].direction == "lower" and stats["ok"].direction == "higher"
    assert stats["ok"].ci_method == "Wilson" and stats["similarity"].ci_method == "Student t"
    assert stats["ok"].skipped == 0


def test_per_metric_thresholds_replace_defaults_and_read_the_direction(db: ReadOnlyDatabase) -> None:
    # at or below 0.9 fails for similarity; leaked's default (1 fails) turned off
    assert _positions(db, RowFilter(failed=True, thresholds={"similarity": 0.9})) == [1, 2, 3]
    assert _positions(db, RowFilter(failed=True, thresholds={"similarity": 0.9, "leaked": None})) == [1, 2, 3]
    assert _positions(db, RowFilter(failed=True, thresholds={"similarity": 0.5, "leaked": None})) == [1, 3]
    # lower is better: at or above 0.2 fails (0.2 and 0.7); ok's default off as well
    assert _positions(db, RowFilter(failed=True, thresholds={"distance": 0.2, "ok": None})) == [2, 3]
    # a 0/1 higher-is-better threshold at 1 fails rows scoring 1 too: the stored flag
    # (scores below 1) must not narrow the search then
    assert _positions(db, RowFilter(failed=True, thresholds={"ok": 1.0, "leaked": None})) == [0, 1, 2, 3, 4]


def test_a_threshold_on_an_unknown_metric_is_refused(db: ReadOnlyDatabase) -> None:
    with pytest.raises(BadRequest, match="unknown metric 'nope'"):
        _positions(db, RowFilter(failed=True, thresholds={"nope": 0.5}))
