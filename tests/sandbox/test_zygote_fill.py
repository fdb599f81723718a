"""The zygote takes pymalloc's free blocks before it freezes, so that a child's new
objects land in pools of their own rather than on pages it shares with the zygote."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r"""
import json, os, sys
from assay.sandbox.harness import zygote

def free_blocks():
    fd = os.memfd_create("stats")
    saved = os.dup(2)
    os.dup2(fd, 2)
    sys._debugmallocstats()
    os.dup2(saved, 2)
    os.lseek(fd, 0, 0)
    text = os.read(fd, 1 << 20).decode()
    total = 0
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 5 and all(f.isdigit() for f in fields) and int(fields[1]) >= 48:
            total += int(fields[4])
    return total

garbage = [bytes(n % 400 + 20) for n in range(20000)][::3]  # holes all over the pools
before = free_blocks()
zygote.fill_free_blocks()
zygote.fill_free_blocks()
print(json.dumps({"before": before, "after": free_blocks(), "fillers": len(zygote._FILLERS)}))
"""


def test_free_blocks_are_taken_before_the_freeze() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    counts = json.loads(out.stdout)
    assert counts["before"] > 1000
    assert counts["fillers"] >= counts["before"] // 2
    # what is left is the last pool of each size class, partly carved
    assert counts["after"] < counts["before"] / 4
