"""A real project folder (a user module, a data file) and the installed `assay` script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ASSAY = Path(sys.executable).with_name("assay")

APP = """
import time


def answer(inputs):
    if inputs["q"] == "boom":
        raise RuntimeError("the model is down")
    return {"answer": inputs["q"].upper()}


def slow_answer(inputs):
    time.sleep(0.05)
    return {"answer": inputs["q"].upper()}


def broken(inputs):
    raise RuntimeError("always down")


def correct(outputs, reference_outputs):
    return outputs.get("answer") == reference_outputs["answer"]


def length(outputs):
    return len(outputs.get("answer", ""))


def accuracy(outputs, reference_outputs):
    return sum(o.get("answer") == r["answer"] for o, r in zip(outputs, reference_outputs)) / len(outputs)
"""


def write_data(path: Path, n: int, wrong_every: int = 5) -> Path:
    """n examples; every ``wrong_every``-th reference disagrees with the target."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            reference = "WRONG" if i % wrong_every == 0 else f"Q{i}"
            handle.write(json.dumps({"inputs": {"q": f"q{i}"}, "outputs": {"answer": reference}}) + "\n")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    write_data(tmp_path / "data.jsonl", 10)
    return tmp_path


def run_assay(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if k not in ("ASSAY_DATABASE_URL", "GITHUB_STEP_SUMMARY")
    }
    environment.update(env or {})
    return subprocess.run(
        [str(ASSAY), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
    )
