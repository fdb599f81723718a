"""HumanEval-X problems/s of two checkouts of assay, side by side in one run.

    .venv/bin/python bench/multilang_before_after.py BEFORE_SRC [--after-src DIR]
        [--languages go,java,cpp,typescript] [--candidates 1,5] [--rounds 2]
        [--workers 2] [--only HumanEval/0,...] [--mode cases|programs]

Runs ``bench/multilang.py`` (this checkout's script, test-case mode unless ``--mode
programs``, no cold-start run) in
a process of its own per measurement, with ``PYTHONPATH`` set to each side's ``src``: for
every language and candidate count, ``--rounds`` pairs, the side that goes first
alternating, so a burst of load on a shared machine falls on both sides alike. Prints
every measurement and the median of each side. BEFORE_SRC is the ``src`` folder of the
older checkout, e.g. one made with ``git worktree add --detach /tmp/before <commit>``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MULTILANG = os.path.join(HERE, "multilang.py")
AFTER_SRC = os.path.join(os.path.dirname(HERE), "src")
# a result row of multilang.py: "go           50/50         2.41           97%  ..."
ROW = re.compile(r"^(?P<language>\w+)\s+(?P<passed>\d+)/(?P<jobs>\d+)\s+(?P<rate>[\d.]+)\s", re.MULTILINE)


def measure(src: str, language: str, candidates: int, args: argparse.Namespace) -> float:
    """problems/s of one multilang.py run against the assay in ``src``."""
    command = [sys.executable, MULTILANG, "--mode", args.mode, "--skip-cold", "--languages", language]
    command += ["--workers", str(args.workers), "--candidates", str(candidates)]
    if args.only:
        command += ["--only", args.only]
    environment = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    found = ROW.search(done.stdout)
    if done.returncode != 0 or found is None or found["language"] != language:
        raise SystemExit(f"{language} against {src} gave no result row:\n{done.stdout}\n{done.stderr}")
    if found["passed"] != found["jobs"]:
        raise SystemExit(
            f"{language} against {src}: only {found['passed']}/{found['jobs']} passed:\n{done.stdout}"
        )
    return float(found["rate"])


def compare(language: str, candidates: int, args: argparse.Namespace) -> tuple[list[float], list[float]]:
    sides: dict[str, list[float]] = {"before": [], "after": []}
    sources = {"before": args.before_src, "after": args.after_src}
    for round_ in range(args.rounds):
        order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
        for side in order:
            rate = measure(sources[side], language, candidates, args)
            sides[side].append(rate)
            load = os.getloadavg()[0]
            print(
                f"  {language} k={candidates} {side:<6} {rate:6.2f} problems/s (load {load:.1f})", flush=True
            )
    return sides["before"], sides["after"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("before_src", help="the src folder of the older checkout")
    parser.add_argument("--after-src", default=AFTER_SRC, help="default: this checkout's src")
    parser.add_argument("--languages", default="go,java,cpp,typescript")
    parser.add_argument("--candidates", default="1,5", help="comma-separated K (candidates per problem)")
    parser.add_argument("--rounds", type=int, default=2, help="before/after pairs per cell")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated task ids (default: all 50)")
    parser.add_argument(
        "--mode",
        choices=("cases", "programs"),
        default="cases",
        help="test cases, or HumanEval-X test programs",
    )
    args = parser.parse_args()
    for src in (args.before_src, args.after_src):
        if not os.path.isfile(os.path.join(src, "assay", "__init__.py")):
            raise SystemExit(f"{src} is not a src folder holding assay/ (give the checkout's src)")
    rows = []
    for language in args.languages.split(","):
        for candidates in (int(k) for k in args.candidates.split(",")):
            before, after = compare(language, candidates, args)
            rows.append((language, candidates, statistics.median(before), statistics.median(after)))
    print(
        f"\n{'language':<11} {'k':>3} {'before':>8} {'after':>8} {'after/before':>13}  (problems/s, medians)"
    )
    for language, candidates, before_rate, after_rate in rows:
        print(
            f"{language:<11} {candidates:>3} {before_rate:>8.2f} {after_rate:>8.2f} {after_rate / before_rate:>12.2f}x"
        )


if __name__ == "__main__":
    main()
