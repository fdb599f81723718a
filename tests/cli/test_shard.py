"""`assay run --shard I/N` as real processes on one SQLite file: concurrent shards add up to
one unsharded run, the experiment completes only with its last shard, leases keep two
processes off one shard, and a shard killed with SIGKILL is taken over and resumed."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from tests.cli.conftest import ASSAY, run_assay, write_data

from assay import Client

APP = """
import os
import re
import shlex
import time


def work(inputs):
    time.sleep(float(os.environ.get("SHARD_DELAY", "0")))
    hold = os.environ.get("SHARD_HOLD")
    while hold and os.path.exists(hold):  # the test holds the run here until it removes the file
        time.sleep(0.02)
    if inputs["q"] == "q7":
        raise RuntimeError("the model is down")
    return {"answer": inputs["q"].upper(), "pid": os.getpid()}


def correct(outputs, reference_outputs):
    return outputs.get("answer") == reference_outputs["answer"]


def accuracy(outputs, reference_outputs):
    return sum(o.get("answer") == r["answer"] for o, r in zip(outputs, reference_outputs)) / len(outputs)
"""

EXAMPLES, REPETITIONS = 20, 2
RUN = ("run", "app:work", "--data", "data.jsonl", "-e", "app:correct", "--summary", "app:accuracy")
RUN += ("--repetitions", str(REPETITIONS), "--db", "db.sqlite")


@pytest.fixture
def shard_project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    write_data(tmp_path / "data.jsonl", EXAMPLES)
    return tmp_path


_started: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _stop_leftovers() -> Any:
    """A failed assertion must not leave a shard process running."""
    yield
    while _started:
        process = _started.pop()
        if process.poll() is None:
            process.kill()
        process.communicate()


def start(project: Path, *args: str, delay: float = 0.0, hold: Path | None = None) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_DATABASE_URL"}
    env.update(SHARD_DELAY=str(delay), SHARD_HOLD=str(hold or ""))
    slow = ("--concurrency", "1") if delay else ()  # one row at a time: the run lasts rows x delay
    return subprocess.Popen(
        [str(ASSAY), *RUN, *slow, *args],
        cwd=project,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def query(project: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(project / "db.sqlite", timeout=30) as conn:
        return conn.execute(sql, params).fetchall()


def experiment_id(project: Path, name: str) -> str:
    return str(query(project, "SELECT id FROM experiments WHERE name = ?", name)[0][0])


def scores(project: Path, name: str) -> dict[tuple[str, int], tuple[Any, ...]]:
    """Per (example, repetition): whether the target failed, and the (key, score) results."""
    exp = experiment_id(project, name)
    rows = query(
        project,
        "SELECT u.example_id, u.repetition, u.error IS NOT NULL, r.key, r.score FROM runs u "
        "LEFT JOIN results r ON r.run_id = u.id WHERE u.experiment_id = ? ORDER BY r.key",
        exp,
    )
    by_row: dict[tuple[str, int], tuple[Any, ...]] = {}
    for example, repetition, failed, key, score in rows:
        by_row[(example, repetition)] = (*by_row.get((example, repetition), (failed,)), key, score)
    count = query(project, "SELECT COUNT(*) FROM runs WHERE experiment_id = ?", exp)[0][0]
    assert count == len(by_row)  # no (example, repetition) stored twice
    return by_row


def figures(project: Path, name: str) -> tuple[Any, ...]:
    """The stored aggregates and summary results, without timings."""
    exp = experiment_id(project, name)
    stats = query(
        project, "SELECT row_count, run_errors, final FROM experiment_stats WHERE experiment_id = ?", exp
    )
    metrics = query(
        project,
        "SELECT key, mean, n, errors, unscored, stderr, ci_low, ci_high, min, max, histogram, skipped, "
        "binary FROM metric_stats WHERE experiment_id = ? ORDER BY key",
        exp,
    )
    summary = query(project, "SELECT key, score, error FROM summary_results WHERE experiment_id = ?", exp)
    return stats, metrics, summary


def status(project: Path, name: str) -> str:
    return str(query(project, "SELECT status FROM experiments WHERE name = ?", name)[0][0])


def wait_for(condition: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def stored_rows(project: Path, name: str) -> int:
    if not (project / "db.sqlite").exists():
        return 0
    try:
        found = query(
            project,
            "SELECT COUNT(*) FROM runs u JOIN experiments e ON e.id = u.experiment_id WHERE e.name = ?",
            name,
        )
    except sqlite3.OperationalError:  # the store is being created
        return 0
    return int(found[0][0])


def lease_holders(project: Path) -> list[int]:
    """The pids holding live leases."""
    if not (project / "db.sqlite").exists():
        return []
    try:
        found = query(
            project, "SELECT pid FROM leases WHERE state = 'running' AND expires_at > ?", time.time()
        )
    except sqlite3.OperationalError:  # the store is being created
        return []
    return [pid for (pid,) in found]


def shard_of(position: int, repetition: int, count: int) -> int:
    return (position * REPETITIONS + repetition) % count


@pytest.mark.slow
def test_three_concurrent_shards_store_exactly_one_unsharded_run(shard_project: Path) -> None:
    whole = run_assay(*RUN, "--experiment", "whole", cwd=shard_project)
    assert whole.returncode == 0, whole.stderr
    shards = [
        start(shard_project, "--experiment", "split", "--shard", f"{i + 1}/3", delay=0.01) for i in range(3)
    ]
    outcomes = [finish(process) for process in shards]
    assert all(code == 0 for code, _, _ in outcomes), [err for _, _, err in outcomes]
    assert status(shard_project, "split") == "completed"
    assert scores(shard_project, "split") == scores(shard_project, "whole")
    assert len(scores(shard_project, "split")) == EXAMPLES * REPETITIONS
    assert figures(shard_project, "split") == figures(shard_project, "whole")
    stats, metrics, summary = figures(shard_project, "split")
    assert stats == [(EXAMPLES * REPETITIONS, REPETITIONS, 1)] and summary and metrics
    # Each process ran its own slice only: the pid in a row's outputs names who ran it.
    pids = {process.pid: i for i, process in enumerate(shards)}
    ran = query(
        shard_project,
        "SELECT position, repetition, json_extract(outputs, '$.pid') FROM runs WHERE experiment_id = ? "
        "AND error IS NULL",
        experiment_id(shard_project, "split"),
    )
    assert all(pids[pid] == shard_of(pos, rep, 3) for pos, rep, pid in ran)
    # One of the three (the last to finish) ran the summary evaluator and says so.
    assert sum("the last one" in err for _, _, err in outcomes) == 1


@pytest.mark.slow
def test_the_experiment_is_partial_until_its_last_shard_finishes(shard_project: Path) -> None:
    for i in (3, 1):
        done = run_assay(
            *RUN, "--experiment", "split", "--shard", f"{i}/3", "--fail-under", "correct=1", cwd=shard_project
        )
        assert done.returncode == 0, done.stderr  # gates wait for the last shard
        assert "checked by the shard that finishes last" in done.stderr
    assert status(shard_project, "split") == "partial"
    assert figures(shard_project, "split") == ([], [], [])  # nothing stored as final yet
    show = run_assay("show", "split", "--db", "db.sqlite", cwd=shard_project)
    assert "partial (2/3 shards done; 1 not started)" in show.stderr, show.stderr
    listed = run_assay("experiments", "--db", "db.sqlite", cwd=shard_project)
    assert "2/3 shards done" in listed.stdout
    last = run_assay(
        *RUN, "--experiment", "split", "--shard", "2/3", "--fail-under", "correct=1", cwd=shard_project
    )
    assert last.returncode == 1, last.stderr  # the gate is judged on every shard's rows
    assert status(shard_project, "split") == "completed"
    results = Client(str(shard_project / "db.sqlite")).read_experiment("split")
    assert len(results) == EXAMPLES * REPETITIONS
    assert [r.key for r in results.summary_results.results] == ["accuracy"]
    show = run_assay("show", "split", "--db", "db.sqlite", cwd=shard_project)
    assert "shards done" not in show.stderr and "40 rows" in show.stdout


@pytest.mark.slow
def test_a_shard_killed_with_sigkill_is_taken_over_at_once_and_resumes_its_own_rows(
    shard_project: Path,
) -> None:
    args = ("--experiment", "split", "--shard", "2/3")  # rows at index 1 modulo 3
    victim = start(shard_project, *args, delay=0.2)
    wait_for(lambda: stored_rows(shard_project, "split") >= 3)
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate()
    before = {(p, r) for p, r in query(shard_project, "SELECT position, repetition FROM runs")}
    # Its lease has 30 s to live, but its pid is gone on this machine: no wait, no --wait.
    resumed = run_assay(*RUN, *args, cwd=shard_project)
    assert resumed.returncode == 0, resumed.stderr
    rows = query(shard_project, "SELECT position, repetition, json_extract(outputs, '$.pid') FROM runs")
    mine = {(p, r) for p in range(EXAMPLES) for r in range(REPETITIONS) if shard_of(p, r, 3) == 1}
    assert {(p, r) for p, r, _ in rows} == mine and len(rows) == len(mine)  # its own rows, once each
    rerun = {(p, r) for p, r, pid in rows if pid != victim.pid}
    assert rerun == mine - before  # only what the victim had not stored
    assert 0 < len(before) < len(mine)
    assert status(shard_project, "split") == "partial"


@pytest.mark.slow
def test_a_live_lease_held_elsewhere_is_refused_and_taken_over_once_it_expires(shard_project: Path) -> None:
    first = run_assay(*RUN, "--experiment", "split", "--shard", "1/3", cwd=shard_project)
    assert first.returncode == 0, first.stderr
    # A holder on another machine, killed: its lease lives until it stops being renewed,
    # which this test decides (a lease of 6 s expired while a CLI started at load ~100)
    query(
        shard_project,
        "INSERT INTO leases VALUES (?, 1, 3, 'ci-runner-7', 4242, 'dead', ?, 'running')",
        experiment_id(shard_project, "split"),
        time.time() + 600,
    )
    args = ("--experiment", "split", "--shard", "2/3")  # stored as shard index 1
    refused = run_assay(*RUN, *args, cwd=shard_project)
    assert refused.returncode == 3, refused.stderr
    assert "shard 2/3 of experiment 'split' is being run by pid 4242 on ci-runner-7" in refused.stderr
    assert "--wait" in refused.stderr and stored_rows(shard_project, "split") == 14  # shard 0's only
    waiter = start(shard_project, *args, "--wait")
    assert waiter.stderr is not None
    said = waiter.stderr.readline()  # an event: it says it waits, while the lease lives
    assert "waiting for shard 2/3 of experiment 'split', run by pid 4242 on ci-runner-7" in said, said
    assert waiter.poll() is None and stored_rows(shard_project, "split") == 14
    query(shard_project, "UPDATE leases SET expires_at = ? WHERE shard = 1", time.time())  # renewed no more
    code, _, err = finish(waiter)
    assert code == 0, err
    assert stored_rows(shard_project, "split") == 14 + 13
    holder = query(shard_project, "SELECT host, state FROM leases WHERE shard = 1")
    assert holder == [(socket.gethostname(), "done")]


@pytest.mark.slow
def test_a_second_process_on_a_live_shard_refuses_or_waits_and_finds_nothing_left(
    shard_project: Path,
) -> None:
    args, hold = ("--experiment", "split", "--shard", "1/2"), shard_project / "hold"
    hold.touch()
    first = start(shard_project, *args, hold=hold)
    wait_for(lambda: lease_holders(shard_project) == [first.pid])
    refused = run_assay(*RUN, *args, cwd=shard_project)
    assert refused.returncode == 3, refused.stderr
    assert f"is being run by pid {first.pid}" in refused.stderr
    waiter = start(shard_project, *args, "--wait")
    assert waiter.stderr is not None
    said = waiter.stderr.readline()  # an event: the waiter says it waits while the first holds the lease
    assert f"waiting for shard 1/2 of experiment 'split', run by pid {first.pid}" in said, said
    assert waiter.poll() is None
    hold.unlink()
    code, _, err = finish(first)
    assert code == 0, err
    code, _, err = finish(waiter)
    assert code == 0, err
    pids = {pid for (pid,) in query(shard_project, "SELECT json_extract(outputs, '$.pid') FROM runs")}
    assert waiter.pid not in pids and first.pid in pids  # the waiter found nothing left to run
    assert stored_rows(shard_project, "split") == EXAMPLES * REPETITIONS // 2


@pytest.mark.slow
def test_without_shard_a_resume_of_a_running_experiment_is_refused(shard_project: Path) -> None:
    hold = shard_project / "hold"
    hold.touch()
    first = start(shard_project, "--experiment", "whole", hold=hold)
    wait_for(lambda: lease_holders(shard_project) == [first.pid])
    second = run_assay(*RUN, "--experiment", "whole", "--resume", cwd=shard_project)
    assert second.returncode == 3, second.stderr
    assert f"experiment 'whole' is being run by pid {first.pid}" in second.stderr
    hold.unlink()
    code, _, err = finish(first)
    assert code == 0, err
    assert stored_rows(shard_project, "whole") == EXAMPLES * REPETITIONS


@pytest.mark.slow
def test_bad_shards_are_usage_errors_naming_the_flag(shard_project: Path) -> None:
    cases = {
        "0/3": "--shard '0/3': shards count from 1 (as Playwright's and Jest's --shard do), so I must "
        "be 1 to 3: 1/3, 2/3, 3/3",
        "4/3": "--shard '4/3': shards count from 1",
        "0/0": "--shard '0/0': the shard count must be at least 1",
        "a/b": "--shard 'a/b': write I/N",
        "-1/2": "--shard '-1/2': write I/N",
    }
    for given, message in cases.items():
        done = run_assay(*RUN, "--experiment", "split", f"--shard={given}", cwd=shard_project)
        assert done.returncode == 2 and message in done.stderr, (given, done.stderr)
    no_name = run_assay(*RUN, "--shard", "1/2", cwd=shard_project)
    assert no_name.returncode == 2 and "--shard 1/2 needs --experiment NAME" in no_name.stderr
    assert not (shard_project / "db.sqlite").exists() or stored_rows(shard_project, "split") == 0


@pytest.mark.slow
def test_a_shard_count_other_than_the_experiments_is_refused_and_nothing_is_lost(shard_project: Path) -> None:
    first = run_assay(*RUN, "--experiment", "split", "--shard", "1/3", cwd=shard_project)
    assert first.returncode == 0, first.stderr
    stored = scores(shard_project, "split")
    other = run_assay(*RUN, "--experiment", "split", "--shard", "1/4", cwd=shard_project)
    assert other.returncode == 2
    assert "is split into 3 shards, so --shard I/4" in other.stderr
    assert "--shard I/3 with I from 1 to 3" in other.stderr
    whole = run_assay(*RUN, "--experiment", "split", "--resume", cwd=shard_project)
    assert whole.returncode == 2 and "a run without --shard" in whole.stderr
    run_assay(*RUN, "--experiment", "plain", cwd=shard_project)
    split_late = run_assay(*RUN, "--experiment", "plain", "--shard", "1/2", cwd=shard_project)
    assert split_late.returncode == 2 and "runs whole (it was created without --shard" in split_late.stderr
    assert scores(shard_project, "split") == stored


README = Path(__file__).resolve().parents[2] / "docs" / "team.md"

CI_APP = """
def answer(inputs):
    return {"answer": inputs["q"].upper()}


def correct(outputs, reference_outputs):
    return outputs["answer"] == reference_outputs["answer"]


def accuracy(outputs, reference_outputs):
    return sum(o["answer"] == r["answer"] for o, r in zip(outputs, reference_outputs)) / len(outputs)
"""


def readme_shard_command() -> str:
    """The `run:` line of the README's sharded matrix."""
    section = README.read_text(encoding="utf-8").split("## Sharded runs in CI", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, "the sharded CI section has no yaml block"
    assert "shard: [1, 2, 3]" in block.group(1)  # --shard counts from 1
    (line,) = [m.group(1) for m in re.finditer(r"\n\s+run: (assay run .*)", block.group(1))]
    return line


@pytest.mark.slow
def test_the_readme_matrix_runs_as_written(tmp_path: Path, store_url: str) -> None:
    """On a SQLite file and on a PostgreSQL server, as the matrix's secret would name."""
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "app.py").write_text(CI_APP, encoding="utf-8")
    write_data(tmp_path / "evals" / "qa.jsonl", 15)  # 3 of 15 references are wrong: 0.8
    command = readme_shard_command().replace("${{ github.run_id }}", "4242")
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_DATABASE_URL"}
    env["ASSAY_DATABASE_URL"] = store_url
    jobs = [
        subprocess.Popen(
            shlex.split(command.replace("${{ matrix.shard }}", str(shard))),
            cwd=tmp_path,
            env={**env, "PATH": f"{ASSAY.parent}{os.pathsep}{env['PATH']}"},
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for shard in (1, 2, 3)
    ]
    _started.extend(jobs)
    outcomes = [finish(job) for job in jobs]
    assert [code for code, _, _ in outcomes] == [0, 0, 0], [err for _, _, err in outcomes]
    gated = [out for _, out, _ in outcomes if "correct >= 0.8" in out]
    assert len(gated) == 1 and "pass" in gated[0]  # the last shard judged the gate, on all rows
    results = Client(env["ASSAY_DATABASE_URL"]).read_experiment("pr-4242")
    assert results.experiment.status == "completed" and len(results) == 15
    assert results.aggregate["correct"].mean == pytest.approx(0.8)
    assert [(r.key, r.score) for r in results.summary_results.results] == [("accuracy", pytest.approx(0.8))]
