"""Rows sorted and filtered by a metric: every page against a plain-Python oracle, on
SQLite and PostgreSQL, through the index walk (one result of the metric per row) and the
per-row fallback (a metric missing on some rows, or written twice on one)."""

from __future__ import annotations

import random
import sqlite3
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from both_backends import on_both_backends, reader_of_both  # noqa: F401 - fixtures: store, db
from ui_testdata import T0

from assay.evaluation._tally import tally_of_stored
from assay.schemas import EvaluationResult, Example, Run
from assay.store import Store, open_store
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION
from assay.store.read import ranked, walk
from assay.store.read.database import ReadOnlyDatabase
from assay.store.records import ExperimentRecord, ExperimentRow
from assay.store.sqlite import _statements
from assay.ui import queries
from assay.ui.models import RowFilter

EXAMPLES = 23
REPETITIONS = 2
# (score, error) per result; a "leftover" score on an errored result must not count.
Spec = dict[str, list[tuple[Any, str | None]]]


def _spec(rng: random.Random, position: int, *, ragged: bool) -> Spec:
    """Scores with many ties, errors (some leaving a score behind), unscored results;
    ``ragged``: some rows lack a metric, some hold it twice."""
    choice = rng.random()
    if choice < 0.12:
        s: list[tuple[Any, str | None]] = [(None, "ValueError: s broke")]
    elif choice < 0.2:
        s = [(0.9, "TimeoutError: left a score")]
    elif choice < 0.27:
        s = [(None, None)]  # unscored (a value, or skipped)
    else:
        s = [(rng.choice([0.0, 0.5, 1.0, True, 0.25 * position % 1]), None)]
    if ragged and choice > 0.9:
        s = []
    elif ragged and 0.8 < choice <= 0.9:
        s.append((rng.choice([0.0, 0.5, 1.0]), None))
    d = [(round(rng.random(), 1), None)]  # lower is better
    return {"s": s, "d": d}


def _build(store: Store, name: str, *, seed: int, ragged: bool) -> dict[tuple[int, int], Spec]:
    """An experiment whose rows are written in a shuffled order (so that storage order
    says nothing about data order), and its specs by (position, repetition)."""
    rng = random.Random(seed)
    dataset = store.get_dataset(name="sorted") or store.create_dataset("sorted")
    examples = list(store.iter_examples(dataset.id))
    if not examples:
        store.add_examples(dataset.id, [Example(inputs={"i": i}) for i in range(EXAMPLES)])
        examples = list(store.iter_examples(dataset.id))
    record = ExperimentRecord(
        name=name,
        dataset_id=dataset.id,
        dataset_version=1,
        status="completed",
        num_examples=EXAMPLES,
        num_repetitions=REPETITIONS,
    )
    store.create_experiment(record)
    specs = {(p, r): _spec(rng, p, ragged=ragged) for p in range(EXAMPLES) for r in range(REPETITIONS)}
    keys = list(specs)
    rng.shuffle(keys)
    rows = [_row(examples[p], p, r, specs[(p, r)]) for p, r in keys]
    for start in range(0, len(rows), 7):
        store.write_rows(record.id, rows[start : start + 7])
    store.finish_experiment(record.id, "completed")
    return specs


def _row(example: Example, position: int, repetition: int, spec: Spec) -> ExperimentRow:
    run = Run(
        inputs=example.inputs,
        outputs={"o": position},
        start_time=T0,
        end_time=T0 + timedelta(milliseconds=position),
    )
    results = [
        EvaluationResult(
            key=key,
            score=score,
            error=error,
            evaluator_info={"direction": "lower"} if key == "d" else {},
        )
        for key, entries in spec.items()
        for score, error in entries
    ]
    return ExperimentRow(run=run, example=example, repetition=repetition, position=position, results=results)


def _value(spec: Spec, key: str) -> float | None:
    """A row's sort value: its lowest score that is not an error's."""
    scores = [float(score) for score, error in spec[key] if error is None and score is not None]
    return min(scores) if scores else None


def _oracle(specs: dict[tuple[int, int], Spec], key: str, *, descending: bool) -> list[tuple[int, int]]:
    scored = [k for k in specs if _value(specs[k], key) is not None]
    scored.sort(key=lambda k: ((-1 if descending else 1) * (_value(specs[k], key) or 0.0), k))
    return scored + sorted(k for k in specs if _value(specs[k], key) is None)


def _page_keys(db: ReadOnlyDatabase, name: str, row_filter: RowFilter, page: int, per_page: int) -> Any:
    experiment = queries.find_experiment(db, name)
    assert experiment is not None
    result = queries.row_page(db, experiment, row_filter, page=page, per_page=per_page)
    return result.total, [(row.position, row.repetition) for row in result.rows]


def _all_pages(
    db: ReadOnlyDatabase, name: str, row_filter: RowFilter, per_page: int
) -> list[tuple[int, int]]:
    seen: list[tuple[int, int]] = []
    for page in range(1, EXAMPLES * REPETITIONS // per_page + 3):  # two pages past the end
        total, keys = _page_keys(db, name, row_filter, page, per_page)
        assert len(keys) <= per_page
        seen += keys
    assert total == len(seen)
    return seen


@pytest.mark.parametrize("far", [False, True], ids=["forwards", "from-the-end"])
@pytest.mark.parametrize("ragged", [False, True], ids=["index", "fallback"])
def test_every_page_of_a_metric_sort_matches_the_oracle(
    store: Store, db: ReadOnlyDatabase, ragged: bool, far: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``far``: with the figures stored, every page past the middle is read from the end."""
    specs = _build(store, "exp", seed=7, ragged=ragged)
    if far:
        monkeypatch.setattr(walk, "_FAR", 0)
        record = store.get_experiment(name="exp")
        assert record is not None
        store.write_stats(record.id, tally_of_stored(store.iter_scores(record.id)).stats(final=True))
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    assert ranked.one_result_per_row(db, experiment.id, "s") is not ragged
    for order in ("asc", "desc"):
        expected = _oracle(specs, "s", descending=order == "desc")
        assert expected[-1] in {k for k in specs if _value(specs[k], "s") is None}  # unscored last
        for per_page in (1, 4, 7, 50):
            row_filter = RowFilter(sort="metric:s", order=order)
            assert _all_pages(db, "exp", row_filter, per_page) == expected, (order, per_page)


@pytest.mark.parametrize("ragged", [False, True], ids=["index", "fallback"])
def test_bounded_metric_filters_count_and_sort_like_the_oracle(
    store: Store, db: ReadOnlyDatabase, ragged: bool
) -> None:
    specs = _build(store, "exp", seed=11, ragged=ragged)

    def within(key: str, test: Any) -> list[tuple[int, int]]:
        return [
            k
            for k in sorted(specs)
            if any(
                error is None and score is not None and test(float(score)) for score, error in specs[k][key]
            )
        ]

    below = RowFilter(metric="s", below=0.5)
    assert _all_pages(db, "exp", below, 4) == within("s", lambda v: v < 0.5)
    # "d" is lower-is-better: worse than 0.6 reads as above it.
    worse = RowFilter(metric="d", worse_than=0.6)
    assert _all_pages(db, "exp", worse, 5) == within("d", lambda v: v > 0.6)
    for order in ("asc", "desc"):
        sorted_below = RowFilter(metric="s", below=1.0, sort="metric:s", order=order)
        expected = [
            k for k in _oracle(specs, "s", descending=order == "desc") if k in within("s", lambda v: v < 1)
        ]
        assert _all_pages(db, "exp", sorted_below, 3) == expected
        both = RowFilter(metric="d", worse_than=0.2, below=0.8, sort="metric:d", order=order)
        expected = [
            k
            for k in _oracle(specs, "d", descending=order == "desc")
            if k in within("d", lambda v: 0.2 < v < 0.8)
        ]
        assert _all_pages(db, "exp", both, 6) == expected


def test_an_index_walk_reads_the_rank_index_in_order_without_a_sort(tmp_path: Path) -> None:
    """The plans of the walk's queries: the rank index, and no temporary b-tree (a sort of
    every row) on SQLite."""
    store = open_store(str(tmp_path / "plan.db"))
    _build(store, "exp", seed=3, ragged=False)
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    plans: list[str] = []
    original = db.query

    def explained(sql: str, params: Any = ()) -> Any:
        if "results r" in sql and ranked.RANK in sql:
            plans.append(" / ".join(row[3] for row in original(f"EXPLAIN QUERY PLAN {sql}", params)))
        return original(sql, params)

    db.query = explained  # type: ignore[method-assign]
    for order in ("asc", "desc"):
        for page in (2, 9, 10):  # within the scored rows, across to the unscored, past them
            queries.row_page(db, experiment, RowFilter(sort="metric:s", order=order), page=page, per_page=5)
        queries.row_page(db, experiment, RowFilter(metric="s", below=0.5), page=1, per_page=5)
        bounded = RowFilter(metric="s", below=0.9, sort="metric:s", order=order)
        queries.row_page(db, experiment, bounded, page=1, per_page=5)
    assert len(plans) >= 15 and any("IS NULL" in plan or "<expr>=?" in plan for plan in plans)
    for plan in plans:
        assert "results_by_rank" in plan and "TEMP B-TREE" not in plan, plan
    db.close()
    store.close()


def _old_store_rows(experiment: str) -> list[str]:
    """Rows as a store at schema version 5 held them: results without their position."""
    created = "2026-01-01T00:00:00+00:00"
    statements = [
        f"INSERT INTO experiments (id, name, status, created_at) VALUES ('{experiment}', 'old', 'completed', '{created}')"
    ]
    # Stored in an order other than data order: positions 0, 3, 2, 1 and 0 (repetition 0).
    for position, score in enumerate([0.5, None, 1.0, 0.5, 0.0]):
        run = str(uuid.UUID(int=100 + position))
        statements.append(
            "INSERT INTO runs (id, experiment_id, example_id, repetition, position, failed) VALUES "
            f"('{run}', '{experiment}', 'x{position}', 0, {4 - position if position else 0}, 0)"
        )
        statements.append(
            "INSERT INTO results (experiment_id, run_id, key, score, example_id, repetition) VALUES "
            f"('{experiment}', '{run}', 'k', {'NULL' if score is None else score}, 'x{position}', 0)"
        )
    return statements


def test_a_store_of_the_previous_schema_migrates_and_sorts(tmp_path: Path) -> None:
    """Migration 6 on PostgreSQL runs in tests/store/test_store_backends.py (version 1 to now)."""
    experiment = "00000000-0000-4000-8000-0000000000ee"
    url = str(tmp_path / "old.db")
    with sqlite3.connect(url) as conn:
        for script in MIGRATIONS[:5]:
            for statement in _statements(script):
                conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema_version', '5')")
        for statement in _old_store_rows(experiment):
            conn.execute(statement)
    store = open_store(url)
    db = ReadOnlyDatabase(store)
    summary = queries.find_experiment(db, "old")
    assert summary is not None
    assert db.query("SELECT value FROM meta WHERE key = 'schema_version'")[0][0] == str(SCHEMA_VERSION)
    backfilled = db.query("SELECT r.position, u.position FROM results r JOIN runs u ON u.id = r.run_id")
    assert len(backfilled) == 5 and all(row[0] == row[1] for row in backfilled)
    assert ranked.one_result_per_row(db, summary.id, "k")
    page = queries.row_page(db, summary, RowFilter(sort="metric:k", order="desc"), page=1, per_page=10)
    assert [(row.position, _score(row)) for row in page.rows] == [
        (2, 1.0),
        (0, 0.5),
        (1, 0.5),
        (0, 0.0),
        (3, None),
    ]
    store.close()


def _score(row: Any) -> float | None:
    return next(cell.score for cell in row.scores if cell.key == "k")


def test_the_one_result_check_is_kept_until_a_rescore_rewrites_the_figures(
    store: Store, db: ReadOnlyDatabase
) -> None:
    """A finished experiment's answer is reused; appending a second result of the metric
    to a row (as a re-score does, figures rewritten after it) is seen at once."""
    _build(store, "exp", seed=5, ragged=False)
    record = store.get_experiment(name="exp")
    assert record is not None
    store.write_stats(record.id, tally_of_stored(store.iter_scores(record.id)).stats(final=True))
    counted: list[str] = []
    original = db.query

    def spied(sql: str, params: Any = ()) -> Any:
        if "GROUP BY example_id, repetition" in sql:
            counted.append(sql)
        return original(sql, params)

    db.query = spied  # type: ignore[method-assign]
    assert ranked.one_result_per_row(db, str(record.id), "s")
    assert ranked.one_result_per_row(db, str(record.id), "s") and counted == []  # the stored fact
    first = store.load_rows(record, limit=1)[0]
    store.write_results(record.id, [(first.run.id, [EvaluationResult(key="s", score=-1.0)])], replace=False)
    store.write_stats(record.id, tally_of_stored(store.iter_scores(record.id)).stats(final=True))
    assert not ranked.one_result_per_row(db, str(record.id), "s")
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    page = queries.row_page(db, experiment, RowFilter(sort="metric:s"), page=1, per_page=200)
    assert len(page.rows) == page.total == EXAMPLES * REPETITIONS  # the row once, not twice
    assert page.rows[0].run_id == str(first.run.id)  # its new lowest score, -1, sorts first
