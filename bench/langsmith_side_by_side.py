"""Run the LangSmith-style script of tests/langsmith_compat on LangSmith and, with the import
swapped, on assay; print both outputs' differences and each run's wall time.

    .venv/bin/pip install langsmith   # for this comparison only; never an assay dependency
    .venv/bin/python bench/langsmith_side_by_side.py

LangSmith's "Starting evaluation of experiment: <random name>" lines are left out of the
comparison (assay prints nothing unless asked for progress).
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "tests" / "langsmith_compat" / "langsmith_style_script.py"


def run(source: str, folder: Path) -> tuple[list[str], float]:
    path = folder / "script.py"
    path.write_text(source)
    env = {**os.environ, "ASSAY_DATABASE_URL": str(folder / "store.db")}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(path)], cwd=folder, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        raise SystemExit(f"the script failed in {folder}")
    lines = [
        line for line in done.stdout.splitlines() if not line.startswith("Starting evaluation of experiment")
    ]
    return lines, elapsed


def main() -> None:
    if importlib.util.find_spec("langsmith") is None:
        raise SystemExit("pip install langsmith into this environment to compare")
    source = SCRIPT.read_text()
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        theirs, their_time = run(source, Path(a))
        ours, our_time = run(re.sub(r"\blangsmith\b", "assay", source), Path(b))
    diff = list(difflib.unified_diff(theirs, ours, "langsmith", "assay", lineterm=""))
    print("\n".join(diff) if diff else f"identical output ({len(ours)} lines)")
    print(f"wall time: langsmith {their_time:.2f} s, assay {our_time:.2f} s")


if __name__ == "__main__":
    main()
