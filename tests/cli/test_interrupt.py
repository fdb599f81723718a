"""Ctrl-C and SIGTERM: one line, no traceback, status `interrupted`, rows kept, resumable."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.cli.conftest import ASSAY, run_assay, write_data

from assay import Client

LINE = re.compile(r"^interrupted: (\d+) of 600 rows stored in (\S+); resume with `--resume` / `resume=True`$")


def _interrupt(
    command: list[str],
    cwd: Path,
    signum: int,
    db: Path,
    to_a_thread: bool = False,
    sigint: signal.Handlers = signal.SIG_DFL,
    *,
    to_the_group: bool = False,
    after_rows: int = 1,
) -> subprocess.CompletedProcess[str]:
    """Signal the run once its first rows are stored: a fixed wait signals a loaded
    machine's run while it is still importing. ``to_a_thread``: the kernel delivers the
    signal to one of the run's other threads (a row thread, the writer), as it may any
    process-directed signal. ``sigint``: the SIGINT disposition the run starts with (a
    terminal's foreground command: the default; a background job of a non-interactive
    shell, as a CI script starts one: ignored), whatever this test process has.
    ``to_the_group``: the run leads a process group that gets the signal, as a terminal's
    foreground job gets Ctrl-C (once ``after_rows`` rows are stored)."""
    child = subprocess.Popen(
        _with_sigint(sigint, command),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=to_the_group,
    )
    _wait_for_stored_rows(db, child, rows=after_rows)
    if to_a_thread:
        _signal_another_thread(child.pid, signum)
    elif to_the_group:
        os.killpg(child.pid, signum)
    else:
        child.send_signal(signum)
    out, err = child.communicate(timeout=60)
    return subprocess.CompletedProcess(command, child.returncode, out, err)


def _wait_for_stored_rows(db: Path, child: subprocess.Popen[str], timeout: float = 60, rows: int = 1) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert child.poll() is None, "the run ended before it was interrupted"
        if db.exists():
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
                    if conn.execute("SELECT count(*) FROM runs").fetchone()[0] >= rows:
                        return
            except sqlite3.OperationalError:  # the schema is not created yet
                pass
        time.sleep(0.05)
    raise AssertionError(f"fewer than {rows} rows were stored in {db} within {timeout} s")


def _with_sigint(disposition: signal.Handlers, command: list[str]) -> list[str]:
    """``command``, exec'd with SIGINT set to ``disposition`` (exec keeps it)."""
    set_it = f"import os, signal, sys; signal.signal(signal.SIGINT, signal.{disposition.name}); "
    return [sys.executable, "-c", set_it + "os.execvp(sys.argv[1], sys.argv[1:])", *command]


def _signal_another_thread(pid: int, signum: int) -> None:
    """kill(2) on a thread's id signals the whole process, and Linux hands the signal to
    that thread when it does not block it: the case the main thread does not see.

    A row thread lives for one row, so the one listed may have ended by the time it is
    signalled (ESRCH, when this process is descheduled between the two): then the next."""
    while True:
        others = [int(tid) for tid in os.listdir(f"/proc/{pid}/task") if int(tid) != pid]
        assert others, "the run has no other thread"
        for tid in sorted(others, reverse=True):  # the newest first: a row thread
            try:
                os.kill(tid, signum)
                return
            except ProcessLookupError:
                continue


RUN = [
    *(str(ASSAY), "run", "app:slow_answer", "--data", "big.jsonl", "-e", "app:correct"),
    *("--experiment", "long", "--concurrency", "4"),
]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("to_a_thread", [False, True], ids=["to-the-process", "to-a-row-thread"])
def test_the_cli_stops_with_one_line_and_resumes(project: Path, signum: int, to_a_thread: bool) -> None:
    write_data(project / "big.jsonl", 600)
    run = RUN
    done = _interrupt(run, project, signum, project / ".assay" / "assay.db", to_a_thread)
    assert done.returncode == 130, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and LINE.match(lines[0]), done.stderr
    stored = int(LINE.match(lines[0]).group(1))  # type: ignore[union-attr]
    assert 0 < stored < 600
    client = Client(str(project / ".assay" / "assay.db"))
    record = client.store.get_experiment(name="long")
    assert record is not None and record.status == "interrupted"
    assert len(client.store.completed_keys(record.id)) == stored
    listed = run_assay("experiments", cwd=project)
    assert re.search(rf"long\s.*interrupted\s.*{stored}/600", listed.stdout), listed.stdout
    # the rest of the rows at 32 at once: what is tested is that they complete (7 s at 4)
    resumed = run_assay(*run[1:], "--resume", "--concurrency", "32", cwd=project)
    assert resumed.returncode == 0, resumed.stderr
    assert "600 rows. Stored as long" in resumed.stdout
    assert client.store.get_experiment(name="long").status == "completed"  # type: ignore[union-attr]


@pytest.mark.slow
def test_sigterm_stops_a_run_that_started_with_sigint_ignored(project: Path) -> None:
    """``assay run ... &`` in a CI script starts with SIGINT ignored, so Python installs no
    Ctrl-C handler; a cancelled job's SIGTERM must still stop it as an interrupt."""
    write_data(project / "big.jsonl", 600)
    db = project / ".assay" / "assay.db"
    done = _interrupt(RUN, project, signal.SIGTERM, db, sigint=signal.SIG_IGN)
    assert done.returncode == 130, done.stderr
    line = LINE.match(done.stderr.strip())
    assert line and 0 < int(line.group(1)) < 600, done.stderr
    record = Client(str(db)).store.get_experiment(name="long")
    assert record is not None and record.status == "interrupted"


SCRIPT = """
import sys, time
from assay import Client, evaluate

db, rows, seconds, name, threads = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], int(sys.argv[5])

def target(inputs):
    time.sleep(seconds)
    return {"y": inputs["x"]}

evaluate(target, data=[{"x": i} for i in range(rows)], experiment=name, max_concurrency=threads,
         client=Client(db), progress=False)
"""


@pytest.mark.slow
@pytest.mark.parametrize("to_a_thread", [False, True], ids=["to-the-process", "to-a-row-thread"])
def test_the_api_raises_one_short_interrupt(tmp_path: Path, to_a_thread: bool) -> None:
    (tmp_path / "script.py").write_text(SCRIPT, encoding="utf-8")
    db = tmp_path / "s.db"
    command = [sys.executable, "script.py", str(db), "600", "0.05", "api", "4"]
    done = _interrupt(command, tmp_path, signal.SIGINT, db, to_a_thread)
    last = done.stderr.strip().splitlines()[-1]
    line = re.match(
        r"assay\.evaluation\.ExperimentInterrupted: interrupted: (\d+) of 600 rows stored in api;", last
    )
    assert line, done.stderr
    assert int(line.group(1)) < 600, "the interrupt waited for every row"
    assert "asyncio" not in done.stderr and "never retrieved" not in done.stderr, done.stderr
    record = Client(str(tmp_path / "s.db")).store.get_experiment(name="api")
    assert record is not None and record.status == "interrupted"


@pytest.mark.slow
def test_ctrl_c_to_the_terminal_group_of_a_run_with_a_writer_process(tmp_path: Path) -> None:
    """A run large enough to commit through its writer process: Ctrl-C reaches the whole
    foreground group; the run stops, every row it counts is stored, and the writer
    process (in a session of its own) exits with it."""
    (tmp_path / "script.py").write_text(SCRIPT, encoding="utf-8")
    db = tmp_path / "big.db"
    command = [sys.executable, "script.py", str(db), "20000", "0.002", "big", "8"]
    # past the writer process's threshold before the signal
    done = _interrupt(command, tmp_path, signal.SIGINT, db, to_the_group=True, after_rows=1500)
    line = re.search(r"interrupted: (\d+) of 20000 rows stored in big;", done.stderr)
    assert line, done.stderr
    stored = int(line.group(1))
    assert 1500 <= stored < 20000
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == stored
    assert not _processes_naming(str(db)), "a writer process outlived the run"


def _processes_naming(text: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if text.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found
