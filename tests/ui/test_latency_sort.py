"""Rows sorted by latency and by error, read from the runs' indexes, and pages that start
after the previous page's last row: every page against a plain-Python oracle, on SQLite
and PostgreSQL; the index plans; a store of the previous schema migrating."""

from __future__ import annotations

import random
import re
import sqlite3
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from both_backends import on_both_backends, reader_of_both  # noqa: F401 - fixtures: store, db
from fastapi.testclient import TestClient
from ui_testdata import T0

from assay.evaluation._tally import tally_of_stored
from assay.schemas import EvaluationResult, Example, Run
from assay.store import Store, open_store
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION
from assay.store.read import rows, walk
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.walk import decode_cursor
from assay.store.records import ExperimentRecord, ExperimentRow
from assay.store.sqlite import _statements
from assay.ui import create_app, queries
from assay.ui.models import RowFilter

EXAMPLES = 19
REPETITIONS = 2
Key = tuple[int, int]
# (latency in ms or None for a run that never ended, whether the target failed)
Spec = tuple[float | None, bool]


def build(store: Store, name: str = "exp", *, seed: int = 3, binary: bool = False) -> dict[Key, Spec]:
    """Latencies with many ties (and runs without one), errored runs with and without a
    latency, written in a shuffled order so that storage order says nothing."""
    rng = random.Random(seed)
    dataset = store.create_dataset(f"data-{name}")
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
    specs: dict[Key, Spec] = {
        (p, r): (rng.choice([None, 0.5, 2.0, 2.0, 3.25, 7.0]), rng.random() < 0.25)
        for p in range(EXAMPLES)
        for r in range(REPETITIONS)
    }
    keys = list(specs)
    rng.shuffle(keys)
    rows = [_row(examples[p], p, r, specs[(p, r)], binary) for p, r in keys]
    for start in range(0, len(rows), 5):
        store.write_rows(record.id, rows[start : start + 5])
    store.finish_experiment(record.id, "completed")
    # The figures evaluate stores when an experiment finishes (what counts are kept by).
    store.write_stats(record.id, tally_of_stored(store.iter_scores(record.id)).stats(final=True))
    return specs


def _row(example: Example, position: int, repetition: int, spec: Spec, binary: bool) -> ExperimentRow:
    latency, failed = spec
    run = Run(
        inputs=example.inputs,
        outputs=None if failed else {"o": position},
        error="RuntimeError: target broke" if failed else None,
        start_time=T0,
        end_time=None if latency is None else T0 + timedelta(milliseconds=latency),
    )
    results = [EvaluationResult(key="s", score=position % 3 / 2)]
    if binary:  # a 0/1 metric "b" that errors on some rows
        error = "ValueError: b broke" if position % 7 == 3 else None
        results.append(
            EvaluationResult(key="b", score=None if error else (position + repetition) % 4 != 0, error=error)
        )
    return ExperimentRow(run=run, example=example, repetition=repetition, position=position, results=results)


def oracle(specs: dict[Key, Spec], sort: str, *, descending: bool) -> list[Key]:
    """By rank, ties in data order, the unranked last in data order, in both directions."""
    sign = -1 if descending else 1
    if sort == "metric:s":
        return sorted(specs, key=lambda k: (sign * (k[0] % 3), k))
    if sort == "error":
        return sorted(specs, key=lambda k: (sign * specs[k][1], k))
    timed = sorted(
        (k for k in specs if specs[k][0] is not None), key=lambda k: (sign * (specs[k][0] or 0), k)
    )
    return timed + sorted(k for k in specs if specs[k][0] is None)


def offset_pages(db: ReadOnlyDatabase, row_filter: RowFilter, per_page: int) -> list[list[Key]]:
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    pages = []
    for page in range(1, EXAMPLES * REPETITIONS // per_page + 3):  # two pages past the end
        result = queries.row_page(db, experiment, row_filter, page=page, per_page=per_page)
        assert result.total == EXAMPLES * REPETITIONS
        pages.append([(row.position, row.repetition) for row in result.rows])
    return [keys for keys in pages if keys]


def keyset_pages(db: ReadOnlyDatabase, row_filter: RowFilter, per_page: int) -> list[list[Key]]:
    """Page after page through each page's ``next_after``, as the "next" link goes."""
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    pages, after, page = [], None, 1
    while True:
        result = queries.row_page(db, experiment, row_filter, page=page, per_page=per_page, after=after)
        pages.append([(row.position, row.repetition) for row in result.rows])
        if page * per_page >= result.total:
            assert result.next_after is None
            return pages
        # Without a keyset link (a sort, not a walk) the next link is by offset.
        after, page = (None if result.next_after is None else decode_cursor(result.next_after)), page + 1


@pytest.mark.parametrize("far", [False, True], ids=["forwards", "from-the-end"])
@pytest.mark.parametrize("sort", ["latency", "error", "metric:s"])
def test_every_page_of_a_latency_or_error_sort_matches_the_oracle(
    store: Store, db: ReadOnlyDatabase, sort: str, far: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``far``: every page past the middle is read from the end (at 1M rows, past offset
    5,000 only)."""
    backwards: list[int] = []
    if far:
        monkeypatch.setattr(walk, "_FAR", 0)
        read_backwards = walk._from_end

        def spied(*args: Any, **kwargs: Any) -> Any:
            backwards.append(args[3])
            return read_backwards(*args, **kwargs)

        monkeypatch.setattr(walk, "_from_end", spied)
    specs = build(store)
    assert any(latency is None for latency, _ in specs.values())
    assert any(failed and latency is not None for latency, failed in specs.values())
    for order in ("asc", "desc"):
        expected = oracle(specs, sort, descending=order == "desc")
        for per_page in (1, 4, 7, 50):
            row_filter = RowFilter(sort=sort, order=order)
            by_offset = offset_pages(db, row_filter, per_page)
            assert [key for keys in by_offset for key in keys] == expected, (order, per_page)
            assert keyset_pages(db, row_filter, per_page) == by_offset, (order, per_page)
    assert bool(backwards) is far  # the pages past the middle were read from the end


def test_keyset_pages_of_a_metric_sort_are_its_offset_pages(store: Store, db: ReadOnlyDatabase) -> None:
    """Ties across page boundaries, both directions, bounded or not."""
    build(store)
    for order in ("asc", "desc"):
        for row_filter in (
            RowFilter(sort="metric:s", order=order),
            RowFilter(sort="metric:s", order=order, metric="s", below=1.0),
        ):
            for per_page in (1, 3, 5):
                by_offset = offset_pages_total(db, row_filter, per_page)
                assert keyset_pages(db, row_filter, per_page) == by_offset, (row_filter, per_page)


def offset_pages_total(db: ReadOnlyDatabase, row_filter: RowFilter, per_page: int) -> list[list[Key]]:
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    total = queries.row_page(db, experiment, row_filter, page=1, per_page=per_page).total
    return [
        [
            (row.position, row.repetition)
            for row in queries.row_page(db, experiment, row_filter, page=page, per_page=per_page).rows
        ]
        for page in range(1, max(1, -(-total // per_page)) + 1)
    ]


FILTERS: dict[str, tuple[dict[str, Any], Any]] = {
    # name: (the filter's fields, which rows it keeps given (key, spec))
    "search": ({"q": '"o"'}, lambda key, spec: not spec[1]),  # the runs that did not fail
    "failed": ({"failed": True}, lambda key, spec: spec[1]),  # s is continuous: no threshold
    "below": ({"metric": "s", "below": 0.75}, lambda key, spec: key[0] % 3 < 2),
}


@pytest.mark.parametrize("path", ["walk", "sort"])
@pytest.mark.parametrize("name", list(FILTERS))
@pytest.mark.parametrize("sort", ["latency", "error", "metric:s"])
def test_a_filtered_sort_walks_its_index_or_sorts_the_matches_in_one_order(
    store: Store, db: ReadOnlyDatabase, name: str, sort: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every page, by offset and through the keyset links, is the oracle's order of the
    rows the filter keeps (runs without a latency last in both directions, which
    PostgreSQL's own NULL order would not give descending): whether the filter rides
    along the index walk (a common match) or the matches are sorted (a rare one)."""
    if path == "sort":
        monkeypatch.setattr(rows, "_WALK_SELECTIVITY", 0)  # every filter counts as rare
    specs = build(store)
    fields, keeps = FILTERS[name]
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    for order in ("asc", "desc"):
        descending = order == "desc"
        if sort == "metric:s":
            ordered = sorted(specs, key=lambda k: ((-1 if descending else 1) * (k[0] % 3), k))
        else:
            ordered = oracle(specs, sort, descending=descending)
        expected = [k for k in ordered if keeps(k, specs[k])]
        assert 0 < len(expected) < len(specs)
        row_filter = RowFilter(sort=sort, order=order, **fields)
        for per_page in (1, 4, 50):
            by_offset = offset_pages_total(db, row_filter, per_page)
            assert [key for keys in by_offset for key in keys] == expected, (order, per_page)
            assert keyset_pages(db, row_filter, per_page) == by_offset, (order, per_page)
        page = queries.row_page(db, experiment, row_filter, page=1, per_page=1)
        assert page.total == len(expected)
        own_range = sort == "metric:s" and name == "below"  # a range of the index: always walked
        assert (page.next_after is not None) is (path == "walk" or own_range)  # keyset links come with a walk


def test_the_walks_read_the_runs_indexes_without_a_sort(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "plan.db"))
    build(store)
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    plans: list[str] = []
    original = db.query

    def explained(sql: str, params: Any = ()) -> Any:
        walked = "u.id IN" not in sql and ("u.latency_ms" in sql or "u.error IS NULL THEN 0" in sql)
        if "FROM runs u" in sql and walked:
            plans.append(" / ".join(row[3] for row in original(f"EXPLAIN QUERY PLAN {sql}", params)))
        return original(sql, params)

    db.query = explained  # type: ignore[method-assign]
    for sort in ("latency", "error"):
        for order in ("asc", "desc"):
            for page in (1, 3, 5, 9):
                queries.row_page(db, experiment, RowFilter(sort=sort, order=order), page=page, per_page=5)
    assert len(plans) >= 16
    for plan in plans:
        assert ("runs_by_latency" in plan or "runs_by_error" in plan) and "TEMP B-TREE" not in plan, plan
    db.close()
    store.close()


def test_a_store_of_the_previous_schema_migrates_and_sorts_by_latency(tmp_path: Path) -> None:
    """Migration to now on PostgreSQL runs in tests/store/test_store_backends.py."""
    previous = next(i for i, script in enumerate(MIGRATIONS) if "CREATE INDEX runs_by_latency" in script)
    url = str(tmp_path / "old.db")
    experiment = "00000000-0000-4000-8000-0000000000ee"
    with sqlite3.connect(url) as conn:
        for script in MIGRATIONS[:previous]:
            for statement in _statements(script):
                conn.execute(statement)
        conn.execute(f"INSERT INTO meta VALUES ('schema_version', '{previous}')")
        conn.execute(
            "INSERT INTO experiments (id, name, status, created_at) "
            f"VALUES ('{experiment}', 'old', 'completed', '2026-01-01T00:00:00+00:00')"
        )
        for position, latency in enumerate([5.0, None, 1.5, 5.0, 0.25]):
            conn.execute(
                "INSERT INTO runs (id, experiment_id, example_id, repetition, position, latency_ms, failed) "
                "VALUES (?, ?, ?, 0, ?, ?, 0)",
                (str(uuid.UUID(int=100 + position)), experiment, f"x{position}", 4 - position, latency),
            )
    store = open_store(url)
    db = ReadOnlyDatabase(store)
    assert db.query("SELECT value FROM meta WHERE key = 'schema_version'")[0][0] == str(SCHEMA_VERSION)
    indexes = {row[0] for row in db.query("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"runs_by_latency", "runs_by_error"} <= indexes
    summary = queries.find_experiment(db, "old")
    assert summary is not None
    for order, expected in (("asc", [0.25, 1.5, 5.0, 5.0, None]), ("desc", [5.0, 5.0, 1.5, 0.25, None])):
        page = queries.row_page(db, summary, RowFilter(sort="latency", order=order), page=1, per_page=10)
        assert [row.latency_ms for row in page.rows] == expected
        assert [row.position for row in page.rows][:4] == ([0, 2, 1, 4] if order == "asc" else [1, 4, 2, 0])
    db.close()
    store.close()


def test_a_malformed_after_is_a_bad_request_naming_it(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "api.db"))
    build(store)
    with TestClient(create_app(store), base_url="http://127.0.0.1:8765") as client:
        for bad in ("1.0,2", "x,1,0", "nan,1,0", "1.0,1,zero"):
            answer = client.get("/api/experiments/exp/rows", params={"sort": "latency", "after": bad})
            assert answer.status_code == 400 and "'after'" in answer.text, (bad, answer.text)
        first = client.get("/api/experiments/exp/rows", params={"sort": "latency", "per_page": 4}).json()
        second = client.get(
            "/api/experiments/exp/rows",
            params={"sort": "latency", "per_page": 4, "page": 2, "after": first["next_after"]},
        ).json()
        by_offset = client.get(
            "/api/experiments/exp/rows", params={"sort": "latency", "per_page": 4, "page": 2}
        )
        assert [r["run_id"] for r in second["rows"]] == [r["run_id"] for r in by_offset.json()["rows"]]
    store.close()


def test_the_pager_is_markup_and_its_next_link_carries_the_keyset(tmp_path: Path) -> None:
    """The pager's text is not ASCII ("·", "›"): the page must still print it as markup."""
    store = open_store(str(tmp_path / "pager.db"))
    build(store)
    with TestClient(create_app(store), base_url="http://127.0.0.1:8765") as client:
        html = client.get("/experiments/exp", params={"sort": "latency", "per_page": 4}).text
        assert '<nav class="pager"' in html and "&lt;nav" not in html
        assert re.search(r'rel="next" href="[^"]*page=2&amp;after=[^"]+"', html)
        assert not re.search(r"last »", html) or not re.search(r'href="[^"]*after=[^"]*">last', html)
    store.close()


def _fails(key: Key, spec: Spec, thresholds: dict[str, float | None], worse_than: float | None) -> bool:
    """The oracle of a failing row: its run or an evaluator failed, or a score is at or
    worse than its threshold (b, 0/1: 0 unless set; s, continuous: none unless set;
    ``worse_than`` of s: strictly below it)."""
    position, repetition = key
    b_error = position % 7 == 3
    b = (position + repetition) % 4 != 0
    s = position % 3 / 2
    b_threshold = thresholds.get("b", 0.0)
    s_threshold = thresholds.get("s")
    return (
        spec[1]
        or b_error
        or (b_threshold is not None and float(b) <= b_threshold)
        or (worse_than is None and s_threshold is not None and s <= s_threshold)
        or (worse_than is not None and s < worse_than)
    )


@pytest.mark.parametrize(
    ("thresholds", "worse_than"),
    [({}, None), ({"b": None}, None), ({"s": 0.5}, None), ({"s": 0.5, "b": None}, None), ({}, 0.75)],
)
def test_failing_rows_are_counted_as_many_as_they_are(
    store: Store, db: ReadOnlyDatabase, thresholds: dict[str, float | None], worse_than: float | None
) -> None:
    """The count (a union of index ranges) is the rows the per-row check pages through."""
    specs = build(store, binary=True)
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    metric = "s" if worse_than is not None else None
    row_filter = RowFilter(failed=True, thresholds=thresholds, metric=metric, worse_than=worse_than)
    page = queries.row_page(db, experiment, row_filter, page=1, per_page=500)
    expected = sorted(k for k in specs if _fails(k, specs[k], thresholds, worse_than))
    assert 0 < len(expected) < len(specs)
    assert [(row.position, row.repetition) for row in page.rows] == expected
    assert page.total == len(expected)


def test_a_count_is_kept_until_the_experiment_s_figures_change(store: Store, db: ReadOnlyDatabase) -> None:
    specs = build(store, binary=True)
    record = store.get_experiment(name="exp")
    assert record is not None
    counted: list[str] = []
    original = db.query

    def spied(sql: str, params: Any = ()) -> Any:
        if sql.startswith("SELECT COUNT(*) FROM (SELECT"):
            counted.append(sql)
        return original(sql, params)

    db.query = spied  # type: ignore[method-assign]
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    totals = [
        queries.row_page(db, experiment, RowFilter(failed=True), page=p, per_page=3).total for p in (1, 2)
    ]
    assert totals[0] == totals[1] and len(counted) == 1  # the second page reused the count
    # A re-score turns every b into a failure: the figures change, so the count does.
    run_ids = [row.run.id for row in store.load_rows(record)]
    store.write_results(
        record.id, [(run_id, [EvaluationResult(key="b", score=False)]) for run_id in run_ids], replace=True
    )
    store.write_stats(record.id, tally_of_stored(store.iter_scores(record.id)).stats(final=True))
    page = queries.row_page(db, experiment, RowFilter(failed=True), page=1, per_page=3)
    assert len(counted) == 2 and page.total == len(specs)
