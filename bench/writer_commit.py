"""The SQLite writer process's CPU a row, variant by variant: its own code (``_writer_child``,
loaded by path as the process loads it) receiving and committing a run's fenced batches
of the core benchmark's rows, in this process, on a fresh store per variant.

    .venv/bin/python bench/writer_commit.py [N] [--repeat R] [--batch B] [--only NAME ...]

Per variant, the best of R rounds of the writing thread's CPU a row, split into the
frame's unpickling, the rows' encoding and the rest of the transaction (the inserts, the
fence, the invalidations, the commit). A variant changes one thing of the store before
its rows are written (a PRAGMA, a dropped index), so each idea is measured alone.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from row_stages import _options_for, target

from assay import Client
from assay.evaluation._api import _prepare
from assay.store.sqlite import _write_batch_on
from assay.store.sqlite import _writer_child as child
from assay.store.sqlite._writer import StatementLog

Setup = Callable[[Any], None]


def _variants() -> dict[str, Setup]:
    def run(*statements: str) -> Setup:
        def setup(conn: Any) -> None:
            for statement in statements:
                conn.execute(statement)

        return setup

    return {
        "as it is": run(),
        "foreign_keys=OFF": run("PRAGMA foreign_keys = OFF"),
        "None bound without adapter": _without_none_adapter,
        "synchronous=NORMAL": run("PRAGMA synchronous = NORMAL"),
        "wal_autocheckpoint=0": run("PRAGMA wal_autocheckpoint = 0"),
        "page_size=8192": run(),  # set as the store is made (``_batches``)
        "page_size=16384": run(),
        "without results_by_run": run("DROP INDEX results_by_run"),
        "without results_by_pair": run("DROP INDEX results_by_pair"),
        "without results_by_rank": run("DROP INDEX results_by_rank"),
        "without runs_by_position": run("DROP INDEX runs_by_position"),
        "results keyed by pair": _results_keyed(
            "experiment_id, key, example_id, repetition, run_id",
            "CREATE INDEX results_by_run ON results (run_id)",
        ),
        "results keyed by run": _results_keyed(
            "run_id, key",
            "CREATE INDEX results_by_pair ON results (experiment_id, key, example_id, repetition, score)",
        ),
        "runs keyed by position": _runs_keyed("experiment_id, position, repetition", "UNIQUE (id)"),
        "runs keyed by id": _runs_keyed("id", "UNIQUE (experiment_id, example_id, repetition)"),
        "plain tables (the floor)": run(
            "PRAGMA foreign_keys = OFF",
            "DROP TABLE results",
            "DROP TABLE runs",
            f"CREATE TABLE runs ({_RUNS})",
            f"CREATE TABLE results ({_RESULTS})",
        ),
        "without every index": run(
            *(
                f"DROP INDEX {name}"
                for name in (
                    "runs_by_position",
                    "runs_flagged",
                    "runs_by_latency",
                    "runs_by_error",
                    "results_by_run",
                    "results_by_pair",
                    "results_by_rank",
                )
            )
        ),
    }


_RUNS = """id TEXT, experiment_id TEXT, example_id TEXT, repetition INTEGER,
    position INTEGER, name TEXT, run_type TEXT, inputs TEXT, outputs TEXT, error TEXT,
    start_time TEXT, end_time TEXT, latency_ms REAL, child_runs TEXT, extra TEXT, failed INTEGER"""
_RESULTS = """pk INTEGER, experiment_id TEXT, run_id TEXT, key TEXT, score REAL, value TEXT,
    feedback TEXT, comment TEXT, correction TEXT, metadata TEXT, evaluator_info TEXT, error TEXT,
    score_kind TEXT, example_id TEXT, repetition INTEGER, position INTEGER"""
_RANK = (
    "CREATE INDEX results_by_rank ON results (experiment_id, key, "
    "(CASE WHEN error IS NULL THEN score END), position, repetition)"
)


def _results_keyed(key: str, other_index: str) -> Setup:
    """The results table WITHOUT ROWID, keyed by ``key`` (for the measure: the core
    benchmark's rows are unique by it), with ``results_by_rank`` and ``other_index``."""

    def setup(conn: Any) -> None:
        conn.execute("DROP TABLE results")
        conn.execute(f"CREATE TABLE results ({_RESULTS}, PRIMARY KEY ({key})) WITHOUT ROWID")
        conn.execute(other_index)
        conn.execute(_RANK)

    return setup


def _runs_keyed(key: str, unique: str) -> Setup:
    """The runs table WITHOUT ROWID keyed by ``key``, its four indexes as they are."""

    def setup(conn: Any) -> None:
        conn.execute("PRAGMA foreign_keys = OFF")  # the results' reference to runs(id) stays
        conn.execute("DROP TABLE runs")
        conn.execute(f"CREATE TABLE runs ({_RUNS}, PRIMARY KEY ({key}), {unique}) WITHOUT ROWID")
        for name, shape in (
            ("runs_flagged", "(experiment_id, position, repetition) WHERE failed = 1"),
            ("runs_by_latency", "(experiment_id, latency_ms, position, repetition)"),
            (
                "runs_by_error",
                "(experiment_id, (CASE WHEN error IS NULL THEN 0 ELSE 1 END), position, repetition)",
            ),
        ):
            conn.execute(f"CREATE INDEX {name} ON runs {shape}")
        if key != "experiment_id, position, repetition":
            conn.execute("CREATE INDEX runs_by_position ON runs (experiment_id, position, repetition)")
        conn.execute("PRAGMA foreign_keys = ON")

    return setup


def _without_none_adapter(conn: Any) -> None:
    sqlite3.adapters.pop((type(None), sqlite3.PrepareProtocol), None)


def _batches(n: int, path: Path, batch: int) -> tuple[list[bytes], str]:
    """The frames a run's writer thread sends for N rows, and the store's path."""
    if "page_size=" in path.name:
        made = sqlite3.connect(path)
        made.execute(f"PRAGMA {path.stem.split('-', 3)[3]}")
        made.execute("VACUUM")
        made.close()
    client = Client(str(path))
    client.create_dataset("bench")
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name="bench",
    )
    prepared = _prepare(target, _options_for(client, "commit"))
    pipeline, feed, store, exp = prepared.pipeline, prepared.feed, prepared.store, prepared.record.id
    fence = prepared.lease.fence  # the run's own lease, as its batches carry it
    rows = []
    while (planned := feed.next()) is not None:
        run = pipeline.target.run_sync(planned.example, planned.repetition)
        row = pipeline._row(planned, run, pipeline._evaluate_sync(run, planned.example))
        rows.append(store.prepare_row(exp, row))
    frames = []
    for offset in range(0, n, batch):
        log = StatementLog()
        _write_batch_on(log, exp, rows[offset : offset + batch], None, fence)
        frames.append(pickle.dumps(log.statements, protocol=pickle.HIGHEST_PROTOCOL))
    client.close()
    return frames, str(path)


class _TimedRows(child.Rows):
    """The process's ``Rows``, its encoding timed apart from its inserts (on older code,
    which encoded inside ``insert``, there)."""

    encoding = 0.0

    def encoded(self, statements: list[Any]) -> list[Any]:
        start = time.thread_time()
        try:
            return super().encoded(statements)
        finally:
            self.encoding += time.thread_time() - start

    if not hasattr(child.Rows, "encoded"):

        def insert(self, conn: Any, prepared: list[Any]) -> None:
            start = time.thread_time()
            encoded = [self.encoder.encoded(item) for item in prepared]
            self.encoding += time.thread_time() - start
            self.text.insert_encoded(conn, encoded)


def one_round(n: int, folder: Path, index: int, name: str, setup: Setup, batch: int) -> dict[str, float]:
    frames, path = _batches(n, folder / f"commit-{index}-{abs(hash(name))}-{name}.db", batch)
    rows = _TimedRows(str(Path(child.__file__).parent))  # orjson is importable here already
    if hasattr(child, "bind_none_quickly"):  # as the process does, on this code
        child.bind_none_quickly()
    pragmas = ["PRAGMA foreign_keys = ON", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL"]
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    for pragma in pragmas:
        conn.execute(pragma)
    setup(conn)
    unpickling = total = 0.0
    for frame in frames:
        start = time.thread_time()
        statements = pickle.loads(frame)
        middle = time.thread_time()
        answer = child.commit(conn, statements, rows)
        total += time.thread_time() - start
        unpickling += middle - start
        assert answer == ("ok",), answer
    conn.close()
    sqlite3.adapters.pop((type(None), sqlite3.PrepareProtocol), None)
    us = 1e6 / n
    return {
        "all": total * us,
        "unpickle": unpickling * us,
        "encode": rows.encoding * us,
        "insert+commit": (total - unpickling - rows.encoding) * us,
    }


def _round_apart(python: str, n: int, batch: int, name: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        command = [python, __file__, str(n), "--batch", str(batch), "--child", name, folder]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"a round failed:\n{done.stderr}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--only", nargs="*", default=None, help="variants to measure (default: all)")
    parser.add_argument("--before", metavar="PYTHON", help="also measure 'as it is' with this Python's assay")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # one round in a process of its own
        name, folder = args.child
        print(json.dumps(one_round(args.n, Path(folder), 0, name, _variants()[name], args.batch)))
        return
    sides = [(name, sys.executable) for name in _variants() if not args.only or name in args.only]
    if args.before:
        sides.append(("before: as it is", args.before))
    best: dict[str, dict[str, float]] = {}
    for index in range(args.repeat):  # the sides alternate, each round in a fresh process
        for label, python in sides if index % 2 == 0 else sides[::-1]:
            name = label.removeprefix("before: ")
            figures = _round_apart(python, args.n, args.batch, name)
            if label not in best or figures["all"] < best[label]["all"]:
                best[label] = figures
    print(f"{'variant':>32} {'all':>6} {'unpickle':>9} {'encode':>7} {'insert+commit':>14}  (us a row)")
    for label, f in best.items():
        print(
            f"{label:>32} {f['all']:6.1f} {f['unpickle']:9.1f} {f['encode']:7.1f} {f['insert+commit']:14.1f}"
        )
    load = os.getloadavg()[0]
    print(f"best of {args.repeat} rounds of {args.n:,} rows, batches of {args.batch}; load {load:.1f}")


if __name__ == "__main__":
    main()
