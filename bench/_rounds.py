"""What the before/after benchmarks share: each round in a fresh process of its own (in a
temporary folder it may write to), the sides alternating so that a change of the
machine's load falls on both.

    figures = alternate(sides, rounds, lambda side: run_round(__file__, [str(n)], python=sides[side]))
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

Side = TypeVar("Side")


def run_round(
    script: str, args: Iterable[str], *, python: str = sys.executable, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Runs ``python script --child ARGS FOLDER`` and returns the JSON of its last line."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [python, script, "--child", *args, folder], capture_output=True, text=True, env=env
        )
    if done.returncode != 0:
        raise SystemExit(f"a round failed:\n{done.stderr}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def compile_bytecode(python: str = sys.executable, env: Mapping[str, str] | None = None) -> None:
    """Writes the bytecode of assay as ``python`` imports it (with ``env``), as ``pip
    install`` does for an installed package. This machine's environment sets
    PYTHONDONTWRITEBYTECODE, so an editable checkout's modules would otherwise be
    compiled from source in every round, inside the clock (the modules ``evaluate``
    imports: ~160 ms of CPU against ~75 with bytecode, load 3), while LangSmith's
    installed package has its bytecode. Run before the rounds; what a round times is
    unchanged."""
    script = "import assay, compileall, os; compileall.compile_dir(os.path.dirname(assay.__file__), quiet=1)"
    subprocess.run([python, "-c", script], check=True, env=env)


def alternate(
    sides: Iterable[Side],
    rounds: int,
    measure: Callable[[Side], dict[str, Any]],
    report: Callable[[int, Side, dict[str, Any]], None] = lambda round_, side, got: None,
) -> dict[Side, list[dict[str, Any]]]:
    """Each side measured ``rounds`` times, in turn, in the reverse order every other round."""
    order = list(sides)
    figures: dict[Side, list[dict[str, Any]]] = {side: [] for side in order}
    for round_ in range(rounds):
        for side in order if round_ % 2 == 0 else order[::-1]:
            figures[side].append(measure(side))
            report(round_, side, figures[side][-1])
    return figures


def arguments(
    child: Callable[[int, str], dict[str, Any]], *, n: int, rounds: int, before: str
) -> argparse.Namespace | None:
    """The options every before/after benchmark takes (``n``, ``--rounds``, ``--before``
    naming ``before``); in a round's own process (``--child N FOLDER``) runs ``child``,
    prints its JSON and returns None."""
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=n)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--before", metavar=before.split()[0], help=f"also measure assay as {before}")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1])))
        return None
    return args
