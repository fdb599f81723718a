"""A real process killed with SIGKILL mid-run, then resumed: nothing lost, nothing twice."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay import Client
from assay.evaluation import ExperimentError

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import _interrupted_run as job  # noqa: E402


@pytest.fixture
def client(any_client: Client) -> Client:
    """The tests here exercise the store: each runs on SQLite and on PostgreSQL."""
    return any_client


def stored_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def kill_midway(db: Path) -> None:
    child = subprocess.Popen([sys.executable, str(HERE / "_interrupted_run.py"), str(db)])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if db.exists():
            try:
                if stored_rows(db) >= 40:
                    break
            except sqlite3.OperationalError:
                pass  # schema not created yet
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL


@pytest.mark.slow
def test_sigkill_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "assay.db"
    kill_midway(db)
    client = Client(str(db))
    [record] = client.list_experiments()
    assert record.status == "running"  # it never finished
    before = client.store.completed_keys(record.id)
    total = len(job.DATA) * 2
    assert 40 <= len(before) < total
    with sqlite3.connect(db) as conn:  # every stored run came with its result
        orphans = conn.execute(
            "SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.id)"
        ).fetchone()[0]
    assert orphans == 0

    calls: list[tuple[int, int]] = []

    def counting_target(inputs: dict) -> dict:
        calls.append(inputs["x"])
        return job.target(inputs)

    resumed = client.evaluate(
        counting_target,
        data=job.DATA,
        evaluators=[job.correct],
        experiment="interrupted",
        num_repetitions=2,
        resume=True,
        max_concurrency=8,
    )
    assert len(calls) == total - len(before)  # only what was missing ran
    with sqlite3.connect(db) as conn:
        count, distinct = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT example_id || ':' || repetition) FROM runs"
        ).fetchone()
    assert count == distinct == total

    clean = client.evaluate(
        job.target,
        data=job.DATA,
        evaluators=[job.correct],
        experiment="uninterrupted",
        num_repetitions=2,
        max_concurrency=8,
    )

    def view(results):
        return [
            (
                row["example"].inputs["x"],
                row["run"].extra["repetition"],
                row["run"].outputs["y"],
                [(r.key, r.score) for r in row["evaluation_results"]["results"]],
            )
            for row in results
        ]

    assert view(resumed) == view(clean)
    assert view(client.read_experiment("interrupted")) == view(clean)
    assert resumed.aggregate["correct"].mean == clean.aggregate["correct"].mean
    assert client.store.get_experiment(name="interrupted").status == "completed"


def test_existing_name_without_resume_is_refused_and_nothing_is_touched(
    client: Client, examples: list[dict]
) -> None:
    first = client.evaluate(lambda inputs: inputs, data=examples, experiment="baseline")
    with pytest.raises(ExperimentError, match="'baseline' already exists.*resume=True"):
        client.evaluate(lambda inputs: {"other": 1}, data=examples, experiment="baseline")
    again = client.read_experiment("baseline")
    assert len(again) == len(first) == 6
    assert [row["run"].outputs for row in again] == [row["run"].outputs for row in first]


def test_resume_refuses_different_evaluators_or_repetitions(client: Client, examples: list[dict]) -> None:
    def a(outputs) -> int:
        return 1

    def b(outputs) -> int:
        return 0

    client.evaluate(lambda inputs: inputs, data=examples, evaluators=[a], experiment="exp")
    with pytest.raises(ExperimentError, match="evaluators was \\['a'\\], now \\['b'\\]"):
        client.evaluate(lambda inputs: inputs, data=examples, evaluators=[b], experiment="exp", resume=True)
    with pytest.raises(ExperimentError, match="num_repetitions was 1, now 2"):
        client.evaluate(
            lambda inputs: inputs,
            data=examples,
            evaluators=[a],
            experiment="exp",
            resume=True,
            num_repetitions=2,
        )
    with pytest.raises(ExperimentError, match="it ran on dataset"):
        client.evaluate(
            lambda inputs: inputs, data=examples[:3], evaluators=[a], experiment="exp", resume=True
        )


def test_resume_of_a_finished_experiment_runs_nothing_and_can_omit_data(
    client: Client, examples: list[dict]
) -> None:
    calls: list[dict] = []

    def target(inputs: dict) -> dict:
        calls.append(inputs)
        return inputs

    client.evaluate(target, data=examples, experiment="done")
    results = client.evaluate(target, experiment="done", resume=True)
    assert len(calls) == 6 and len(results) == 6
