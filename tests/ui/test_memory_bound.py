"""Forty parallel comparisons of two 100,000-row experiments: the server (a real ``serve()``
process) answers each with 200 or 503 + Retry-After, never 500, and its memory stays bounded."""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_server import wait_for_port
from ui_testdata import RowSpec, create_experiment, free_port, make_dataset, make_run

from assay.schemas import EvaluationResult, Example
from assay.store import open_store
from assay.store.records import ExperimentRow

pytestmark = pytest.mark.slow

ROWS = 100_000
PARALLEL = 40
# Anonymous memory (heap, not the memory-mapped database file) the server may reach.
ANON_BOUND_MB = 500
# The server is stopped past this, so a regression fails the test instead of the machine.
KILL_AT_MB = 2_000


@pytest.fixture(scope="module")
def big_database(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("big") / "big.db"
    store = open_store(str(path))
    dataset, examples = make_dataset(
        store,
        "big",
        [{"inputs": {"q": f"question {i}"}, "outputs": {"a": f"answer {i}"}} for i in range(ROWS)],
    )
    for name in ("base", "cand"):
        record = create_experiment(store, name, dataset, examples)
        store.write_rows(record.id, rows_of(name, examples))
        store.finish_experiment(record.id, "completed")
    store.close()
    return f"sqlite:///{path}"


def rows_of(name: str, examples: list[Example]) -> Iterator[ExperimentRow]:
    """An experiment's rows: ``correct`` 0 and 1 by turns, ``quality`` 0.5. The rows share
    their results' objects, which a store only reads (building 400,000 of them was a
    quarter of this fixture's time)."""
    results = {
        correct: [EvaluationResult(key="correct", score=correct), EvaluationResult(key="quality", score=0.5)]
        for correct in (0, 1)
    }
    for i, example in enumerate(examples):
        run = make_run(example, RowSpec(outputs={"answer": f"{name} {i}"}))
        yield ExperimentRow(
            run=run, example=example, repetition=0, position=i, results=results[(i + len(name)) % 2]
        )


def memory_mb(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields


class Sampler(threading.Thread):
    """Samples a process's memory every 20 ms; stops it past KILL_AT_MB."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        super().__init__(daemon=True)
        self.process = process
        self.peak_anon = 0.0
        self.killed = False
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set() and self.process.poll() is None:
            anon = memory_mb(self.process.pid).get("RssAnon", 0.0)
            self.peak_anon = max(self.peak_anon, anon)
            if anon > KILL_AT_MB:
                self.killed = True
                self.process.kill()
                return
            time.sleep(0.02)


@pytest.fixture
def server(big_database: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    code = f"from assay.ui import serve; serve({big_database!r}, port={port})"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "ASSAY_UI_TOKEN": ""},
    )  # fmt: skip
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}", process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=20)


def test_forty_parallel_compares_stay_bounded(server: tuple[str, subprocess.Popen[str]]) -> None:
    url, process = server
    with httpx.Client(base_url=url, timeout=300) as client:
        assert client.get("/api/experiments").json()["total"] == 2  # warm: imports, connections
    before = memory_mb(process.pid)
    sampler = Sampler(process)
    sampler.start()

    def compare(index: int) -> httpx.Response:
        path = "/api/compare" if index % 2 else "/compare"
        with httpx.Client(base_url=url, timeout=300) as client:
            return client.get(f"{path}?e=base&e=cand&show=regressions")

    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        answers = list(pool.map(compare, range(PARALLEL)))
    sampler.done.set()
    sampler.join()
    assert not sampler.killed, f"the server passed {KILL_AT_MB} MB of anonymous memory"
    statuses = sorted(answer.status_code for answer in answers)
    assert set(statuses) <= {200, 503}, statuses
    assert 200 in statuses
    for answer in answers:
        if answer.status_code == 503:
            assert answer.headers["retry-after"] == "1" and "busy" in answer.text
    print(f"server anonymous memory: {before['RssAnon']:.0f} MB before, {sampler.peak_anon:.0f} MB peak")
    assert sampler.peak_anon < ANON_BOUND_MB, (before, sampler.peak_anon)
    # and the server still answers, with memory given back
    with httpx.Client(base_url=url, timeout=300) as client:
        assert client.get("/api/compare?e=base&e=cand").status_code == 200
    assert memory_mb(process.pid)["RssAnon"] < ANON_BOUND_MB
