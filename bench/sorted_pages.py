"""Sorted and metric-filtered row pages, timed in process on a store of bench-a / bench-b.

    .venv/bin/python bench/sorted_pages.py STORE

STORE: one built by ``bench/compare.py --keep FOLDER`` (``compare-<rows>.db``). Prints,
per page, the best of 3 ``queries.row_page`` calls (the first pays the one-result check,
kept afterwards for a finished experiment), its total and its first positions.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from assay.store.sqlite import SQLiteStore
from assay.ui import queries
from assay.ui.db import ReadOnlyDatabase
from assay.ui.models import RowFilter
from assay.ui.queries import ranked

PAGES = [
    (RowFilter(sort="metric:similarity"), 1),
    (RowFilter(sort="metric:similarity", order="desc"), 1),
    (RowFilter(sort="metric:correct", order="desc"), 1),
    (RowFilter(sort="metric:correct", order="desc"), 1000),
    (RowFilter(sort="metric:judge_distance", order="asc"), 19800),
    (RowFilter(metric="similarity", below=0.2), 1),
    (RowFilter(metric="similarity", below=0.5, sort="metric:similarity", order="desc"), 1),
    (RowFilter(metric="judge_distance", worse_than=0.5), 1),
]


def best_ms(label: str, call: Callable[[], Any]) -> None:
    timings, out = [], None
    for _ in range(3):
        started = time.perf_counter()
        out = call()
        timings.append((time.perf_counter() - started) * 1000)
    print(f"{label:58} first {timings[0]:8.1f} ms  best {min(timings):8.1f} ms  {out}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    args = parser.parse_args()
    store = SQLiteStore(args.store)
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, "bench-a")
    assert experiment is not None, "the store has no experiment named bench-a"
    print(f"{experiment.rows:,} rows")
    best_ms(
        "one result of similarity per row", lambda: ranked.one_result_per_row(db, experiment.id, "similarity")
    )
    for row_filter, page in PAGES:
        label = f"sort {row_filter.sort} {row_filter.order}, {row_filter.metric} below {row_filter.below} "
        label += f"worse than {row_filter.worse_than}, page {page}"

        def one_page(row_filter: RowFilter = row_filter, page: int = page) -> Any:
            result = queries.row_page(db, experiment, row_filter, page=page, per_page=50)
            return result.total, [row.position for row in result.rows[:3]]

        best_ms(label, one_page)
    db.close()
    store.close()


if __name__ == "__main__":
    main()
