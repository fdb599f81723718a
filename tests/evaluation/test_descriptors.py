"""Running experiments one after another in a long-lived process (a notebook, a test
worker) holds no descriptors for the stores they used once their clients are closed:
nothing is left for a distant full garbage collection to close."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import os, sys
    from assay import Client, evaluate

    def open_descriptors():
        return len(os.listdir("/proc/self/fd"))

    data = [{"inputs": {"x": i}, "outputs": {"y": i}} for i in range(20)]
    before = None
    for round in range(60):
        client = Client("sqlite:///" + os.path.join(sys.argv[1], f"store-{round}.db"))
        results = evaluate(lambda inputs: {"y": inputs["x"]}, data=data, client=client,
                           evaluators=[lambda outputs, reference_outputs: outputs == reference_outputs])
        assert len(list(results)) == 20
        client.close()
        del results, client
        if round == 4:
            before = open_descriptors()
    print("growth", open_descriptors() - before)
    """
)


def test_experiments_in_a_row_leave_no_store_descriptors_open(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    growth = int(done.stdout.split("growth")[1])
    assert growth < 20, f"{growth} descriptors more after 55 more experiments"
