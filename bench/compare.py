"""How fast ``assay.compare`` pairs two experiments, and what it costs in memory.

Builds a store in a temporary folder: one dataset of N examples and two experiments of
N rows with three metrics each (a 0/1 metric, a continuous one, a judge with 2% errors
and lower-is-better), then times ``assay.compare(a, b)`` (median of --repeat runs after
one warm-up) in a fresh process, whose peak RSS (the whole process: interpreter, assay,
SQLite cache) is the memory figure.

    .venv/bin/python bench/compare.py [--rows 10000 100000 1000000] [--repeat 15]
        [--cluster-by doc] [--keep FOLDER]

Several sizes print side by side at the end. ``--keep FOLDER`` keeps the built stores
there (``compare-<rows>.db``) and reuses them on the next run.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import _bulk as bulk

import assay
from assay.evaluation._tally import tally_of_stored
from assay.schemas import EvaluationResult, Example, Run
from assay.store import Store, open_store
from assay.store import _columns as stored_columns

BUDGET_MS = 300.0
BUDGET_MB = 200.0


def build(store: Store, rows: int) -> None:
    """Through the store's bulk path (``bench/_bulk.py``): minutes for 2 x 1M rows."""
    dataset_id = bulk.add_dataset(store, "bench", rows, _example)
    for name, seed, shift in (("bench-a", 1, 0.0), ("bench-b", 2, 0.01)):
        make_row = functools.partial(_row, random.Random(seed), shift)
        experiment_id = bulk.add_experiment(store, name, dataset_id, rows, _example, make_row)
        _store_figures(store, uuid.UUID(experiment_id))


def _example(i: int, dataset_id: Any) -> Example:
    return Example(
        id=bulk.example_id(i),
        dataset_id=dataset_id,
        inputs={"q": f"question {i}"},
        outputs={"a": f"item {i}"},
        metadata={"doc": i // 5},
    )


def _row(rng: random.Random, shift: float, example: Example) -> tuple[Run, list[EvaluationResult]]:
    run = bulk.timed_run(example.id.int - 1, inputs=example.inputs, outputs={"a": "x"})
    return run, _results(rng, shift)


def _store_figures(store: Store, experiment_id: Any) -> None:
    """The counts and metric figures ``evaluate`` stores when an experiment finishes."""
    stats = tally_of_stored(store.iter_scores(experiment_id)).stats(final=True)
    store.write_stats(experiment_id, stats)


def _results(rng: random.Random, shift: float) -> list[EvaluationResult]:
    judge = (
        EvaluationResult(key="judge_distance", error="TimeoutError: judge")
        if rng.random() < 0.02
        else EvaluationResult(key="judge_distance", score=rng.choice([0, 0.5, 1]), direction="lower")
    )
    return [
        EvaluationResult(key="correct", score=rng.random() < 0.7 + shift),
        EvaluationResult(key="similarity", score=min(1.0, rng.random() + shift)),
        judge,
    ]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _ui_compare_ms(store: Store, repeat: int) -> float | None:
    """The UI's compare page queries on the same store: a reference for the machine's load."""
    try:
        from assay.store.read.database import ReadOnlyDatabase
        from assay.ui import queries
    except ImportError:
        return None
    db = ReadOnlyDatabase(store)
    pair = [queries.find_experiment(db, name) for name in ("bench-a", "bench-b")]
    experiments = [e for e in pair if e is not None]
    timings = []
    for _ in range(max(3, repeat // 3)):
        started = time.perf_counter()
        queries.compare_page(db, experiments, show="all", metric=None, page=1, per_page=50)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def _scan_ms(store: Store, repeat: int) -> float:
    """The floor any pairing pays: reading every score of both experiments once."""
    with store.snapshot() as conn:  # type: ignore[attr-defined]
        ids = [row[0] for row in conn.execute("SELECT id FROM experiments ORDER BY name")]
        timings = []
        for _ in range(max(3, repeat // 3)):
            started = time.perf_counter()
            for experiment_id in ids:
                conn.execute(
                    "SELECT key, COUNT(score), SUM(score) FROM results WHERE experiment_id = ? GROUP BY key",
                    (experiment_id,),
                ).fetchall()
            timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def measure(path: str, repeat: int, cluster_by: str | None) -> None:
    """Run in a fresh process: time the comparisons, then report the process's peak RSS
    (the last line is the figures as JSON, for the table of all sizes)."""
    store = open_store(path)
    comparison = assay.compare("bench-a", "bench-b", client=store, cluster_by=cluster_by)
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        comparison = assay.compare("bench-a", "bench-b", client=store, cluster_by=cluster_by)
        timings.append((time.perf_counter() - started) * 1000)
    median = statistics.median(timings)
    rows = comparison.a.rows
    print(
        f"compare 2 x {rows:,} rows: median {median:.0f} ms, min {min(timings):.0f} ms, "
        f"max {max(timings):.0f} ms (budget {BUDGET_MS:.0f} ms at 10,000 rows)"
    )
    compare_rss = _peak_rss_mb()
    print(f"peak RSS of the comparing process: {compare_rss:.0f} MB (budget {BUDGET_MB:.0f} MB)")
    scan = _scan_ms(store, repeat)
    print(
        f"reference in the same run: one covering-index scan of both experiments' scores "
        f"median {scan:.0f} ms; compare / scan = {median / scan:.1f} (the machine's load shows "
        "in both)"
    )
    reference = _ui_compare_ms(store, repeat)
    if reference is not None:
        print(
            f"reference in the same run: the UI compare page (statistics included) "
            f"median {reference:.0f} ms; compare / page = {median / reference:.2f}"
        )
    for metric in comparison.metrics:
        print(
            f"  {metric.key}: {metric.verdict}, B - A {metric.difference:+.4f}, "
            f"p {metric.p_value:.3g} ({metric.test}), n {metric.n_paired}"
        )
    store.close()
    figures = {"rows": rows, "median_ms": median, "min_ms": min(timings), "rss_mb": compare_rss}
    figures["ui_ms"] = reference
    figures["scan_ms"] = scan
    print(json.dumps(figures))


def fill_figures(path: str) -> None:
    """Stores built before figures or metric columns were kept get them (in a process of
    their own, so neither the tally's memory nor the build's counts in the comparing
    process's peak). Columns are (re)built as a completing run builds them, and timed."""
    store = open_store(path)
    for record in store.list_experiments():
        stats = store.load_stats(record.id)
        if stats is None or not stats.final:
            _store_figures(store, record.id)
        started = time.perf_counter()  # rebuilt every time: the figure is printed each run
        built = stored_columns.refresh(store, str(record.id))
        if built is not None:
            print(
                f"metric columns of {record.name} ({built.runs:,} rows, {len(built.metrics)} metrics) "
                f"built in {time.perf_counter() - started:.2f} s "
                f"(peak RSS of the building process {_peak_rss_mb():.0f} MB)",
                flush=True,
            )
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--cluster-by", default=None)
    parser.add_argument("--keep", metavar="FOLDER", help="keep (and reuse) the built stores here")
    parser.add_argument("--measure", metavar="DB", help=argparse.SUPPRESS)
    parser.add_argument("--figures", metavar="DB", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.repeat, args.cluster_by)
        return
    if args.figures:
        fill_figures(args.figures)
        return
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        results = [run_size(Path(args.keep), rows, args) for rows in args.rows]
    else:
        with tempfile.TemporaryDirectory() as folder:
            results = [run_size(Path(folder), rows, args) for rows in args.rows]
    print("\nrows       median    min   peak RSS  scan floor  UI compare page")
    for figures in results:
        ui_ms = figures["ui_ms"]
        print(
            f"{figures['rows']:>9,} {figures['median_ms']:>7.0f} ms {figures['min_ms']:>5.0f} ms "
            f"{figures['rss_mb']:>6.0f} MB  {figures['scan_ms']:>6.0f} ms   "
            + (f"{ui_ms:.0f} ms" if ui_ms is not None else "-")
        )


def run_size(folder: Path, rows: int, args: argparse.Namespace) -> dict[str, Any]:
    """Build (or reuse) the store of ``rows`` rows, then measure it in a fresh process."""
    path = folder / f"compare-{rows}.db"
    if not path.exists():
        store = open_store(str(path) + ".part")
        started = time.perf_counter()
        build(store, rows)
        print(f"built 2 x {rows:,} rows in {time.perf_counter() - started:.1f} s: {bulk.WHAT}")
        store.close()
        Path(str(path) + ".part").rename(path)
    subprocess.run([sys.executable, __file__, "--figures", str(path)], check=True)
    command = [sys.executable, __file__, "--measure", str(path), "--repeat", str(args.repeat)]
    if args.cluster_by:
        command += ["--cluster-by", args.cluster_by]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    print(output, end="")
    figures: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return figures


if __name__ == "__main__":
    main()
