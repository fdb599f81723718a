"""Where a test run's time went, per file: sums the lines pytest prints with
``--durations=0`` (``12.34s call     tests/x.py::test``), from one log or several
(the phases of scripts/test), and prints the costliest files with their set-up share.

    .venv/bin/python scripts/durations.py parallel.log serial.log [--top 30]
    .venv/bin/python scripts/durations.py parallel.log --json > tests/durations.json

``--json`` writes seconds per file instead, the costs by which tests/_scheduling.py hands
the parallel phase's groups out, costliest first (refresh it when the suite changes much).

The sums are of test time, not wall time: with several workers they add up to more
than the run took. On a shared machine the ranking says more than the seconds.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

LINE = re.compile(r"^\s*(?P<seconds>\d+(?:\.\d+)?)s (?P<when>setup|call|teardown)\s+(?P<node>\S+)")


def parse(lines: Iterable[str]) -> dict[str, dict[str, float]]:
    """Seconds per file and phase (setup, call, teardown)."""
    files: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for line in lines:
        found = LINE.match(line)
        if found:
            path = found["node"].split("::")[0]
            files[path][found["when"]] += float(found["seconds"])
    return files


def table(files: dict[str, dict[str, float]], top: int) -> list[str]:
    ranked = sorted(files.items(), key=lambda item: -sum(item[1].values()))
    rows = [f"{'total s':>8} {'setup s':>8} {'call s':>8}  file"]
    for path, phases in ranked[:top]:
        rows.append(f"{sum(phases.values()):8.1f} {phases['setup']:8.1f} {phases['call']:8.1f}  {path}")
    everything = sum(sum(phases.values()) for phases in files.values())
    rows.append(f"{everything:8.1f} {'':8} {'':8}  all {len(files)} files")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path, help="pytest output run with --durations=0")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="seconds per file, as JSON")
    args = parser.parse_args()
    lines = (line for log in args.logs for line in log.read_text(errors="replace").splitlines())
    files = parse(lines)
    if args.json:
        seconds = {
            path.removeprefix("tests/"): round(sum(phases.values()), 1) for path, phases in files.items()
        }
        print(json.dumps(dict(sorted(seconds.items())), indent=1))
    else:
        print("\n".join(table(files, args.top)))


if __name__ == "__main__":
    main()
