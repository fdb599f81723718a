"""How fast the UI opens a 10,000-row experiment (3 metrics per row).

Builds a store in a temporary folder (two experiments on one 10,000-example dataset),
serves it with ``assay.ui.serve`` in a separate process, and reads each answer's
``Server-Timing`` header (time spent in the app) plus the client's wall time.

    .venv/bin/python bench/ui_first_page.py [--rows 10000] [--repeat 20] [--store DB]
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import _bulk as bulk
import httpx

from assay.evaluation import EvaluationResult
from assay.schemas import Example, Run
from assay.store import Store, open_store

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
BUDGET_MS = 300.0


def build(store: Store, rows: int) -> tuple[str, str]:
    """Through the store's bulk path (``bench/_bulk.py``), so 1M-row stores build in minutes."""
    dataset_id = bulk.add_dataset(store, "bench", rows, _example)
    names = []
    for name, seed in (("bench-a", 1), ("bench-b", 2)):
        make_row = functools.partial(_row, random.Random(seed))
        names.append(bulk.add_experiment(store, name, dataset_id, rows, _example, make_row))
    return names[0], names[1]


def _example(i: int, dataset_id: Any) -> Example:
    return Example(
        id=bulk.example_id(i),
        dataset_id=dataset_id,
        inputs={"question": f"What is item {i}? " + "context " * 12},
        outputs={"answer": f"item {i}"},
    )


def _row(rng: random.Random, example: Example) -> tuple[Run, list[EvaluationResult]]:
    return _run(example, rng), _results(rng)


def _run(example: Example, rng: random.Random) -> Run:
    latency = rng.uniform(50, 900)
    child = Run(name="llm", run_type="llm", start_time=T0, end_time=T0 + timedelta(milliseconds=latency))
    return Run(
        inputs=example.inputs,
        outputs={"answer": "item " + str(rng.randint(0, 99)) + " " * 40},
        start_time=T0,
        end_time=T0 + timedelta(milliseconds=latency + 5),
        child_runs=[child],
    )


def _results(rng: random.Random) -> list[EvaluationResult]:
    judge = (
        EvaluationResult(key="judge", error="TimeoutError: judge", metadata={"traceback": "..."})
        if rng.random() < 0.02
        else EvaluationResult(key="judge", score=rng.choice([0, 0.5, 1]))
    )
    cases = [
        {
            "test_case_index": i,
            "input": i,
            "expected_output": i,
            "actual_output": i,
            "execution_success": True,
            "error_message": None,
        }
        for i in range(3)
    ]
    return [
        EvaluationResult(key="correct", score=rng.random() < 0.7),
        EvaluationResult(key="similarity", score=rng.random(), metadata={"test_cases_details": cases}),
        judge,
    ]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_ms(response: httpx.Response) -> float:
    timing = response.headers["server-timing"]
    return float(timing.split("dur=")[1])


def measure(client: httpx.Client, path: str, repeat: int) -> tuple[float, float, float, float]:
    """(cold server ms, warm median server ms, warm p95 server ms, warm median wall ms)."""
    cold = client.get(path)
    cold.raise_for_status()
    server, wall = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(path)
        wall.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        server.append(server_ms(response))
    server.sort()
    p95 = server[min(len(server) - 1, round(0.95 * (len(server) - 1)))]
    return server_ms(cold), statistics.median(server), p95, statistics.median(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--store", help="serve this store's bench-a and bench-b (made here, or by bench/compare.py --keep)"
    )
    args = parser.parse_args()
    if args.store:
        store = open_store(args.store)
        found = [store.get_experiment(name=name) for name in ("bench-a", "bench-b")]
        store.close()
        ids = [str(record.id) for record in found if record is not None]
        serve_and_measure(
            Path(args.store), ids[0], ids[1], found[0].num_examples if found[0] else 0, args.repeat
        )
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        store = open_store(str(path))
        started = time.perf_counter()
        first, second = build(store, args.rows)
        print(
            f"built 2 experiments x {args.rows} rows x 3 metrics in {time.perf_counter() - started:.1f} s: "
            + bulk.WHAT
        )
        store.close()
        serve_and_measure(path, first, second, args.rows, args.repeat)


def serve_and_measure(path: Path, first: str, second: str, rows: int, repeat: int) -> None:
    port = free_port()
    code = f"from assay.ui import serve; serve({f'sqlite:///{path}'!r}, port={port})"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait(port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            run_id = client.get(f"/api/experiments/{first}/rows").json()["rows"][0]["run_id"]
            pages = [
                ("experiment page, first page of rows (the bar)", f"/experiments/{first}"),
                ("  same data as JSON: detail", f"/api/experiments/{first}"),
                ("  same data as JSON: first rows", f"/api/experiments/{first}/rows"),
                ("failed rows only", f"/experiments/{first}?failed=1"),
                ("metric below 0.2", f"/experiments/{first}?metric=similarity&below=0.2"),
                ("sorted by a metric, ascending", f"/experiments/{first}?sort=metric:similarity"),
                (
                    "sorted by a metric, descending",
                    f"/experiments/{first}?sort=metric:similarity&order=desc",
                ),
                (
                    "sorted by a 0/1 metric, descending, page 1000",
                    f"/experiments/{first}?sort=metric:correct&order=desc&page=1000",
                ),
                (
                    "below 0.5, sorted by it, descending",
                    f"/experiments/{first}?metric=similarity&below=0.5&sort=metric:similarity&order=desc",
                ),
                ("sorted by latency", f"/experiments/{first}?sort=latency"),
                ("last page", f"/experiments/{first}?page={max(rows // 50, 1)}"),
                ("one row", f"/experiments/{first}/rows/{run_id}"),
                ("experiment list", "/experiments"),
                ("compare 2 x rows, regressions", f"/compare?e={first}&e={second}&show=regressions"),
            ]
            print(
                f"\n{'page':48} {'cold':>8} {'median':>8} {'p95':>8} {'wall':>8}   (ms; server time "
                f"from Server-Timing, {repeat} warm requests)"
            )
            for label, page in pages:
                cold, median, p95, wall = measure(client, page, repeat)
                print(f"{label:48} {cold:8.1f} {median:8.1f} {p95:8.1f} {wall:8.1f}", flush=True)
                if page == f"/experiments/{first}":
                    bar = max(cold, p95)
        print(f"server peak RSS: {_peak_rss_mb(process.pid):.0f} MB")
        verdict = "within" if bar < BUDGET_MS else "OVER"
        print(
            f"\nfirst page of a {rows}-row experiment: {bar:.1f} ms server time "
            f"(worst of cold and p95), {verdict} the {BUDGET_MS:.0f} ms budget"
        )
    finally:
        process.terminate()
        process.wait(timeout=10)


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextmanager
def served(path: Path, source: str | None) -> Iterator[str]:
    """The UI on the store at ``path``, run from ``source`` (a ``src`` folder) or this code."""
    port = free_port()
    code = f"from assay.ui import serve; serve({f'sqlite:///{path}'!r}, port={port})"
    env = {**os.environ, "PYTHONPATH": source} if source else None
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    try:
        _wait(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("the UI server did not start")


if __name__ == "__main__":
    main()
