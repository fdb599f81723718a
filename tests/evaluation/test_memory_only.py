"""``upload_results=False`` writes nothing: no store file appears, and the closing line
says the experiment was kept in memory, not stored."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    from assay import evaluate

    def exact(outputs, reference_outputs):
        return outputs == reference_outputs

    data = [{"inputs": {"x": i}, "outputs": {"y": i}} for i in range(5)]
    results = evaluate(lambda inputs: {"y": inputs["x"]}, data=data, evaluators=[exact],
                       upload_results=False)
    print("rows", len(list(results)))
    """
)


def test_inline_data_in_memory_creates_no_store(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env["HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "rows 5" in done.stdout
    report = done.stdout + done.stderr
    assert "Kept in memory only" in report and "Stored as" not in report
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "upload_results=False created files"
