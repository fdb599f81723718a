"""A LangSmith script runs on assay with only the package name changed, and prints what it
printed on LangSmith (recorded in ``langsmith_style_expected.txt``; LangSmith's one extra
line, "Starting evaluation of experiment: <random name>", is left out)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from assay.store import open_store

HERE = Path(__file__).parent


def swapped(source: str) -> str:
    return re.sub(r"\blangsmith\b", "assay", source)


def test_the_swapped_script_prints_what_langsmith_printed(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(swapped((HERE / "langsmith_style_script.py").read_text()))
    database = tmp_path / "store.db"
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"ASSAY_DATABASE_URL": str(database), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (HERE / "langsmith_style_expected.txt").read_text()
    # One warning, for the ignored server options, naming where results are kept.
    warnings = [line for line in done.stderr.splitlines() if "LocalStoreWarning" in line]
    assert len(warnings) == 1 and str(database) in warnings[0] and "api_key, api_url" in warnings[0]
    # upload_results=False kept the experiments in memory: nothing of them was stored. The
    # two traces run under tracing_context(enabled=True) are, as LangSmith would send them.
    store = open_store(str(database))
    try:
        assert store.list_datasets() == []
        (project,) = store.list_experiments()
        assert project.name == "default" and project.metadata == {"tracing_project": True}
        roots = [run for run in store.list_traced_runs(project.id) if run.parent_run_id is None]
        assert sorted(run.name for run in roots) == ["outer", "stream"]
    finally:
        store.close()
