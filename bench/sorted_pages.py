"""Sorted and filtered row pages, timed in process on a store of bench-a / bench-b.

    .venv/bin/python bench/sorted_pages.py STORE [--fill-latency] [--repeat 5] [--first-views [--only 6,8] [--against OLD_SRC:OLD_STORE]] [--build-cost]

STORE: one built by ``bench/compare.py --keep FOLDER`` (``compare-<rows>.db``). Prints,
per page the UI offers (every sort, every filter, and their combinations), the first
(cold) and the median of ``--repeat`` ``queries.row_page`` calls, its total and its first
positions. A page marked "keyset" starts after the previous page's last row, as its
"next" link carries it; the others walk to their offset.

The search pages are timed twice: by the scan, then (after the experiment's text index
is built, its build time and the file's growth printed) through the index. A store whose
index is already built is timed through it only.

``--first-views``: every sort and filter at page 1 and deep (``FIRST_VIEWS``), each in a new process that opens the store and imports numpy as the
UI server does when it starts (timed apart), then times that page once: the first view
after a server start, nothing kept. ``--against OLD_SRC:OLD_STORE`` times each also
with the code before a change (on a copy of the store it opens), alternating.

``--build-cost``: what the row orders add to a finished run's column build (each metric's
columns and each order read apart, in this process).

``--fill-latency``: a store built before the bulk builder timed its runs holds none; give
each run the latency the builder now writes (``_bulk.latency_ms``) first, in place.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import _bulk as bulk

from assay.store import text_index
from assay.store.read import ranked
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.walk import decode_cursor
from assay.store.sqlite import SQLiteStore
from assay.ui import queries
from assay.ui.models import ExperimentSummary, RowFilter

F = RowFilter
# (filter, page, whether the page starts after the previous page's last row)
PAGES: list[tuple[RowFilter, int, bool]] = [
    (F(), 1, False),
    (F(sort="metric:similarity"), 1, False),
    (F(sort="metric:similarity", order="desc"), 1, False),
    (F(sort="metric:correct", order="desc"), 1, False),
    (F(sort="metric:correct", order="desc"), 1000, False),
    (F(sort="metric:judge_distance", order="asc"), 19800, False),
    (F(sort="metric:judge_distance", order="asc"), 19800, True),
    (F(sort="metric:correct", order="desc"), 19800, True),
    (F(sort="latency"), 1, False),
    (F(sort="latency", order="desc"), 1, False),
    (F(sort="latency"), 10000, False),
    (F(sort="latency", order="desc"), 19800, False),
    (F(sort="latency", order="desc"), 19800, True),
    (F(sort="error"), 1, False),
    (F(sort="error", order="desc"), 1, False),
    (F(sort="error", order="desc"), 1000, True),
    (F(metric="similarity", below=0.2), 1, False),
    (F(metric="similarity", below=0.5, sort="metric:similarity", order="desc"), 1, False),
    (F(metric="judge_distance", worse_than=0.5), 1, False),
    (F(metric="similarity", below=0.5, sort="latency"), 1, False),
    (F(failed=True), 1, False),
    (F(failed=True), 100, False),
    (F(failed=True, thresholds={"correct": None}), 1, False),
    (F(failed=True, sort="metric:similarity", order="desc"), 1, False),
    (F(failed=True, sort="latency"), 1, False),
    (F(q="question 123456"), 1, False),
    (F(q="question 1234"), 1, False),
    (F(q="question 1234", sort="latency", order="desc"), 1, False),
]
# The first views of issue 40 item 5: every sort (both orders) under every filter the UI
# offers, at page 1 and deep (offset 500k of the million rows; a filtered page at offset
# 250k, the middle of its half million).
_SORTS = [
    ("position", "asc"),
    ("position", "desc"),
    ("latency", "asc"),
    ("latency", "desc"),
    ("error", "asc"),
    ("error", "desc"),
    ("metric:similarity", "desc"),
    ("metric:correct", "desc"),
    ("metric:judge_distance", "asc"),
]
_FILTERS: list[tuple[dict[str, Any], int]] = [
    ({}, 10000),
    ({"failed": True}, 5000),
    ({"failed": True, "thresholds": {"correct": None, "similarity": 0.5}}, 5000),
    ({"metric": "similarity", "below": 0.5}, 5000),
    ({"metric": "judge_distance", "worse_than": 0.5}, 5000),
]
FIRST_VIEWS: list[tuple[RowFilter, int, bool]] = [
    (F(sort=sort, order=order, **params), page, False)
    for params, deep in _FILTERS
    for sort, order in _SORTS
    for page in (1, deep)
]
SEARCHES: list[tuple[RowFilter, int, bool]] = [
    (F(q="question 123456"), 1, False),
    (F(q="question 1234"), 1, False),
    (F(q="question 1234", sort="latency", order="desc"), 1, False),
    (F(q="question 1234", sort="metric:similarity"), 1, False),
    (F(q="question 12"), 1, False),
    (F(q="question 12", sort="metric:similarity", order="desc"), 1, False),
    (F(q="no such text"), 1, False),
    (F(q="12"), 1, False),  # too short for trigrams: the scan
]


def timed(repeat: int, call: Callable[[], Any]) -> tuple[float, float, Any]:
    """The first (cold) call's ms, the median's, and what the last one answered."""
    timings, out = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        out = call()
        timings.append((time.perf_counter() - started) * 1000)
    return timings[0], statistics.median(timings), out


def label_of(row_filter: RowFilter, page: int, keyset: bool) -> str:
    parts = [f"sort {row_filter.sort} {row_filter.order}"]
    if row_filter.metric:
        bound = (
            f"below {row_filter.below}"
            if row_filter.below is not None
            else f"worse than {row_filter.worse_than}"
        )
        parts.append(f"{row_filter.metric} {bound}")
    if row_filter.failed:
        parts.append("failed" + (f" {row_filter.thresholds}" if row_filter.thresholds else ""))
    if row_filter.q:
        parts.append(f"q={row_filter.q!r}")
    return ", ".join(parts) + f", page {page}" + (" (keyset)" if keyset else "")


def one_page(
    db: ReadOnlyDatabase, experiment: ExperimentSummary, row_filter: RowFilter, page: int, keyset: bool
) -> Callable[[], Any]:
    after = None
    if keyset:  # the previous page's link, made once (not timed)
        previous = queries.row_page(db, experiment, row_filter, page=page - 1, per_page=50)
        assert previous.next_after is not None, "the previous page carries no keyset link"
        after = decode_cursor(previous.next_after)

    def call() -> Any:
        result = queries.row_page(db, experiment, row_filter, page=page, per_page=50, after=after)
        return result.total, [row.position for row in result.rows[:3]]

    return call


def fill_latency(path: str) -> None:
    started = time.perf_counter()
    with sqlite3.connect(path) as conn:
        changed = conn.execute(
            f"UPDATE runs SET latency_ms = {bulk.LATENCY_SQL}, end_time = strftime("
            f"'%Y-%m-%dT%H:%M:%f+00:00', start_time, '+' || ({bulk.LATENCY_SQL} / 1000.0) || ' seconds') "
            "WHERE latency_ms IS NULL AND end_time IS NULL"
        ).rowcount
    print(f"filled the latency of {changed:,} runs in {time.perf_counter() - started:.1f} s")


def time_pages(
    db: ReadOnlyDatabase,
    experiment: ExperimentSummary,
    pages: list[tuple[RowFilter, int, bool]],
    repeat: int,
    how: str = "",
) -> None:
    for row_filter, page, keyset in pages:
        cold, median, out = timed(repeat, one_page(db, experiment, row_filter, page, keyset))
        label = label_of(row_filter, page, keyset) + (f" [{how}]" if how else "")
        print(f"{label:72} cold {cold:8.1f} ms  median {median:8.1f} ms  {out}", flush=True)


def first_view(path: str, index: int) -> None:
    """In a process of its own: open the store, import numpy (as the UI server does at
    start), then time page ``FIRST_VIEWS[index]`` once."""
    store = SQLiteStore(path)
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, "bench-a")
    assert experiment is not None, "the store has no experiment named bench-a"
    started = time.perf_counter()
    import numpy  # noqa: F401

    loaded = (time.perf_counter() - started) * 1000
    row_filter, page, keyset = FIRST_VIEWS[index]
    cold, _, out = timed(1, one_page(db, experiment, row_filter, page, keyset))
    label = label_of(row_filter, page, keyset)
    print(f"{label:72} first {cold:8.1f} ms  (numpy at start {loaded:6.1f} ms)  {out}", flush=True)


def first_views(path: str, only: list[int] | None = None, against: str | None = None) -> None:
    """Each first view in a new process; ``against`` (``OLD_SRC:OLD_STORE``): each also
    timed by the code of ``OLD_SRC`` on ``OLD_STORE`` (a copy of the store it can open),
    alternating, old first."""
    print(f"first views, each in a new process (load average {os.getloadavg()[0]:.1f}):", flush=True)
    for index in only if only is not None else range(len(FIRST_VIEWS)):
        if against is not None:
            old_src, old_store = against.split(":", 1)
            env = {**os.environ, "PYTHONPATH": old_src}
            print("  before: ", end="", flush=True)
            subprocess.run(
                [sys.executable, __file__, old_store, "--first-view", str(index)], check=True, env=env
            )
            print("  after:  ", end="", flush=True)
        subprocess.run([sys.executable, __file__, path, "--first-view", str(index)], check=True)
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)


def build_cost(path: str) -> None:
    """What storing the row orders adds to a finished run's column build: each metric's
    columns (the build before) and each row order, read from the store's snapshot and
    timed apart, metric by metric alternated."""
    from assay.store import _columns as columns

    conn = sqlite3.connect(path)
    experiment_id = conn.execute("SELECT id FROM experiments WHERE name = 'bench-a'").fetchone()[0]
    runs = conn.execute("SELECT COUNT(*) FROM runs WHERE experiment_id = ?", (experiment_id,)).fetchone()[0]
    keys = [
        row[0]
        for row in conn.execute("SELECT DISTINCT key FROM results WHERE experiment_id = ?", (experiment_id,))
    ]
    stride = columns._stride(conn, experiment_id)
    print(f"column build at {runs:,} rows (load average {os.getloadavg()[0]:.1f}):", flush=True)
    before = after = 0.0
    for name in [*columns.ORDERS, *keys]:
        if name in keys:
            started = time.perf_counter()
            columns._scan(conn, experiment_id, name, runs)
            spent = time.perf_counter() - started
            before += spent
            print(f"  metric columns of {name:24} {spent:6.2f} s", flush=True)
            name = columns.metric_order(name)
        started = time.perf_counter()
        columns._order(conn, experiment_id, name, stride)
        spent = time.perf_counter() - started
        after += spent
        print(f"  row order {name:32} {spent:6.2f} s", flush=True)
    print(
        f"metric columns {before:.2f} s, row orders {after:.2f} s more (load average {os.getloadavg()[0]:.1f})"
    )
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--fill-latency", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--first-views", action="store_true")
    parser.add_argument("--only", help="with --first-views: which of them, e.g. 6,8,9 (0-based)")
    parser.add_argument(
        "--against", help="with --first-views: OLD_SRC:OLD_STORE, the code before, timed alternately"
    )
    parser.add_argument(
        "--build-cost", action="store_true", help="time the column build: metric columns, row orders"
    )
    parser.add_argument("--first-view", type=int, help=argparse.SUPPRESS)  # one, in this process
    args = parser.parse_args()
    if args.first_view is not None:
        first_view(args.store, args.first_view)
        return
    if args.build_cost:
        build_cost(args.store)
        return
    if args.fill_latency:
        fill_latency(args.store)
    if args.first_views:
        first_views(args.store, [int(i) for i in args.only.split(",")] if args.only else None, args.against)
        return
    started = time.perf_counter()
    store = SQLiteStore(args.store)  # migrates a store of an older schema
    print(f"opened (and migrated) in {time.perf_counter() - started:.1f} s")
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, "bench-a")
    assert experiment is not None, "the store has no experiment named bench-a"
    print(f"{experiment.rows:,} rows, load average {os.getloadavg()[0]:.1f}")
    cold, median, out = timed(args.repeat, lambda: ranked.one_result_per_row(db, experiment.id, "similarity"))
    print(f"{'one result of similarity per row':72} cold {cold:8.1f} ms  median {median:8.1f} ms  {out}")
    time_pages(db, experiment, [p for p in PAGES if not p[0].q], args.repeat)
    if text_index.built(store.conn, str(experiment.id)) is None:
        time_pages(db, experiment, SEARCHES, args.repeat, "scan")
        size = os.path.getsize(args.store)
        started, cpu = time.perf_counter(), time.process_time()
        assert text_index.build(store, str(experiment.id)) is not None
        print(
            f"text index built in {time.perf_counter() - started:.1f} s ({time.process_time() - cpu:.1f} s CPU), "
            f"file {size / 1e6:,.0f} -> {os.path.getsize(args.store) / 1e6:,.0f} MB, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
    time_pages(db, experiment, SEARCHES, args.repeat, "index")
    print(f"load average {os.getloadavg()[0]:.1f}")
    db.close()
    store.close()


if __name__ == "__main__":
    main()
