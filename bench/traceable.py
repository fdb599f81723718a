"""The ``@traceable`` hot path, assay beside LangSmith, in one run: a traced call that makes
two nested traced calls (3 runs deep), every run kept in memory (assay: under a parent run,
as an experiment row keeps them; LangSmith: ``tracing_context(enabled="local")``, which
builds the same run trees without sending them).

    pip install 'assay[bench]'        # brings langsmith, for this comparison only
    python bench/traceable.py [--calls 5000] [--repeats 5]

Each side runs in its own subprocess, alternately, ``--repeats`` times; printed: the median
microseconds per top-level call (3 runs) of each, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

ASSAY = """
import time
from assay.run_helpers import traceable
from assay.schemas import Run
from assay.tracing import trace_into

@traceable
def inner(x):
    return x + 1

@traceable
def middle(x):
    return inner(x) * 2

@traceable
def outer(x):
    return middle(x) - 1

def timed(calls):
    with trace_into(Run(name="row")) as row:
        started = time.perf_counter()
        for i in range(calls):
            outer(i)
        elapsed = time.perf_counter() - started
    assert len(row.child_runs) == calls and row.child_runs[0].child_runs[0].child_runs[0].name == "inner"
    return elapsed
"""

LANGSMITH = """
import time
from langsmith.run_helpers import traceable, tracing_context

ends = []

@traceable
def inner(x):
    return x + 1

@traceable
def middle(x):
    return inner(x) * 2

@traceable
def outer(x):
    return middle(x) - 1

def timed(calls):
    with tracing_context(enabled="local"):
        started = time.perf_counter()
        for i in range(calls):
            outer(i, langsmith_extra={"on_end": ends.append})
        elapsed = time.perf_counter() - started
    assert len(ends) == calls and ends[0].child_runs[0].child_runs[0].name == "inner"
    ends.clear()
    return elapsed
"""

DRIVER = """
import json, sys
calls = int(sys.argv[1])
timed(200)  # warm up
print(json.dumps(timed(calls)))
"""


def one(side: str, calls: int) -> float:
    source = (ASSAY if side == "assay" else LANGSMITH) + DRIVER
    done = subprocess.run(
        [sys.executable, "-c", source, str(calls)],
        capture_output=True,
        text=True,
        env={"LANGSMITH_TRACING": "false"},
    )
    if done.returncode != 0:
        raise SystemExit(f"{side} failed:\n{done.stderr}")
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=5_000)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    times: dict[str, list[float]] = {"assay": [], "langsmith": []}
    for _ in range(options.repeats):
        for side in times:  # alternate, so machine load falls on both alike
            times[side].append(one(side, options.calls) / options.calls * 1e6)
    for side, values in times.items():
        print(
            f"{side:10s} {statistics.median(values):7.1f} us per call (3 runs); all: "
            + ", ".join(f"{v:.1f}" for v in values)
        )
    ratio = statistics.median(times["langsmith"]) / statistics.median(times["assay"])
    print(f"assay is {ratio:.1f}x LangSmith's speed on this path")


if __name__ == "__main__":
    main()
