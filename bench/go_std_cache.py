"""Go jobs whose candidate imports ``net``, with and without the prebuilt cache of Go's
standard packages (``sandbox/_toolchains._build_go_cache``), alternating in one run.

    .venv/bin/python bench/go_std_cache.py [--jobs 6] [--rounds 3] [--backend bubblewrap]

Each job's source is unique (a comment), so no job reuses another's build: every job
compiles. Prints each round's wall time (with the load average: on a shared machine
compare the sides of one run) and the median per job of each side.
Without the cache Go compiles ``net`` (shipped compiled only for cgo) in every job.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
import warnings

from assay.sandbox import Call, SandboxConfig, SandboxIsolationWarning, SandboxPool, get_language
from assay.sandbox import _toolchains as toolchains

CANDIDATE = """package main

import (
	"fmt"
	"net"
)

var _ = net.Dial

func Echo(text string) string {
	return fmt.Sprint(text)
}
"""


def one_round(pool: SandboxPool, jobs: int, cached: bool) -> float:
    """Wall seconds of ``jobs`` jobs, each compiling its own candidate."""
    toolchains.prepare("go")
    saved = toolchains._prebuilt["go"]
    if not cached:
        toolchains._prebuilt["go"] = ""  # the compile step gets no cache: one per job, as before
    try:
        go, started = get_language("go"), time.monotonic()
        for _ in range(jobs):
            code = CANDIDATE + f"\n// {uuid.uuid4().hex}\n"
            run = pool.run_function(go, code, "Echo", [Call(("hi",))], timeout=120)
            assert run.outcomes[0].value == "hi", (run.load_failure, run.outcomes)
        return time.monotonic() - started
    finally:
        toolchains._prebuilt["go"] = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", default="bubblewrap")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        pool = SandboxPool(SandboxConfig(backend=args.backend))
    sides: dict[str, list[float]] = {"no cache": [], "cache": []}
    try:
        for round_ in range(args.rounds):
            order = ("no cache", "cache") if round_ % 2 == 0 else ("cache", "no cache")
            for side in order:
                wall = one_round(pool, args.jobs, cached=side == "cache")
                sides[side].append(wall)
                load = os.getloadavg()[0]
                print(f"  {side:<8} {wall:6.2f} s for {args.jobs} jobs (load {load:.1f})")
    finally:
        pool.close()
    for side, found in sides.items():
        print(f"{side:<8} median per job: {statistics.median(found) / args.jobs:.2f} s")


if __name__ == "__main__":
    main()
