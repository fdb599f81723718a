"""A real finished store file with a page overwritten (as a disk fault or a stray write
would): `assay store check` finds it, `show`, `experiments` and `ui` say the store is
damaged instead of printing its stored figures, runs (new or resumed) refuse to write
into it and name what to do, and `assay store recover` salvages a file that passes the
full check. `assay store backup` copies a store that a run is writing, whole."""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.cli.conftest import ASSAY, run_assay, write_data

from assay import Client, evaluate
from assay.store import integrity

ROWS = 5000


def build(path: Path) -> None:
    client = Client(str(path))
    data = [{"inputs": {"q": f"q{i}"}, "outputs": {"a": i}} for i in range(ROWS)]
    evaluate(
        lambda inputs: {"a": inputs["q"]},
        data=data,
        evaluators=[lambda outputs: 1.0],
        experiment="finished",
        client=client,
        progress=False,
    )
    client.close()
    wait_for_builders()  # the writer process may still be building the metric columns


def wait_for_builders() -> None:
    from assay.store.sqlite import _writer_process

    _writer_process._wait_for_builders(timeout=None)


def stored_rows(path: Path) -> int:
    """Rows of the tables a run fills (examples, runs, results)."""
    with sqlite3.connect(path) as conn:
        return sum(
            conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("examples", "runs", "results")
        )


def overwrite_a_table_page(path: Path) -> int:
    """Random bytes over a table b-tree leaf page in the file's second half; its number."""
    size = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    data = path.read_bytes()
    pages = len(data) // size
    for number in range(pages // 2, pages):
        if data[number * size] == 0x0D:  # a table b-tree leaf page
            with path.open("r+b") as handle:
                handle.seek(number * size)
                handle.write(random.Random(7).randbytes(size))
            return number
    raise AssertionError("no table page found")


def digest(path: Path) -> str:
    """The store file's and its write-ahead log's bytes (the log holds committed pages)."""
    wal = Path(f"{path}-wal")
    logged = wal.read_bytes() if wal.exists() else b""
    return hashlib.sha256(path.read_bytes()).hexdigest() + hashlib.sha256(logged).hexdigest()


def leave_a_log_as_a_killed_writer_does(path: Path) -> None:
    """A process commits into the log and dies before closing: the log keeps the commit,
    and the next read-write connection to close would copy it into the file."""
    script = (
        "import os, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "conn.execute(\"UPDATE experiments SET description = 'touched'\")\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True)
    assert integrity.left_unclean(str(path))


@pytest.mark.slow
@pytest.mark.parametrize("last_writer", ["closed", "killed"])
def test_a_damaged_store_is_found_refused_for_writing_and_recovered(tmp_path: Path, last_writer: str) -> None:
    db = tmp_path / "db.sqlite"
    build(db)
    if last_writer == "killed":
        leave_a_log_as_a_killed_writer_does(db)
    (tmp_path / "app.py").write_text("def work(inputs):\n    return inputs\n", encoding="utf-8")
    write_data(tmp_path / "data.jsonl", 10)
    ok = run_assay("store", "check", "--db", str(db), cwd=tmp_path)
    assert ok.returncode == 0 and "quick check passed" in ok.stdout, ok.stderr

    whole = stored_rows(db)
    overwrite_a_table_page(db)
    before = digest(db)
    for args in (("store", "check"), ("store", "check", "--full")):
        found = run_assay(*args, "--db", str(db), cwd=tmp_path)
        assert found.returncode == 1, found.stderr
        assert "is damaged" in found.stderr and "assay store recover" in found.stderr
    for args in (("show", "finished"), ("experiments",)):
        shown = run_assay(*args, "--db", str(db), cwd=tmp_path)
        assert shown.returncode == 3, shown
        assert "is damaged" in shown.stderr and "assay store check" in shown.stderr
        assert "5000" not in shown.stdout and "completed" not in shown.stdout  # no figures as if whole
    for extra in (("--experiment", "finished", "--resume"), ("--experiment", "another")):
        ran = run_assay("run", "app:work", "--data", "data.jsonl", "--db", str(db), *extra, cwd=tmp_path)
        assert ran.returncode == 3, ran.stderr
        assert "is damaged" in ran.stderr and "assay store backup" in ran.stderr
    assert digest(db) == before  # nothing was written into it

    recovered = tmp_path / "recovered.sqlite"
    done = run_assay("store", "recover", "--db", str(db), str(recovered), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    full = run_assay("store", "check", "--full", "--db", str(recovered), cwd=tmp_path)
    assert full.returncode == 0, full.stderr + full.stdout
    assert 0 < stored_rows(recovered) < whole  # what the damaged page held is gone; the rest is kept


@pytest.mark.slow
def test_a_backup_of_a_store_being_written_is_whole(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    (tmp_path / "app.py").write_text(
        "import time\n\ndef work(inputs):\n    time.sleep(0.001)\n    return inputs\n", encoding="utf-8"
    )
    write_data(tmp_path / "data.jsonl", 20_000)
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_DATABASE_URL"}
    run = subprocess.Popen(
        [str(ASSAY), "run", "app:work", "--data", "data.jsonl", "--db", str(db), "--experiment", "live"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        copies = []
        while run.poll() is None and len(copies) < 5:
            if not db.exists() or os.path.getsize(db) < 1 << 20:
                time.sleep(0.01)  # not a spin: the run it waits for needs the core
                continue
            copy = tmp_path / f"copy{len(copies)}.sqlite"
            done = run_assay("store", "backup", "--db", str(db), str(copy), cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            copies.append(copy)
    finally:
        _, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    assert copies, "the run ended before a copy could be taken"
    for copy in copies:
        checked = run_assay("store", "check", "--full", "--db", str(copy), cwd=tmp_path)
        assert checked.returncode == 0, checked.stderr
    assert run_assay("store", "backup", "--db", str(db), str(copies[0]), cwd=tmp_path).returncode == 2
