"""The user's path, side by side with LangSmith: inline data in, ``evaluate``, rows out.

    .venv/bin/pip install -e '.[bench]'      # LangSmith, for this comparison only
    .venv/bin/python bench/core_throughput.py [N] [--rounds R] [--only assay]
    .venv/bin/python bench/core_throughput.py --before /tmp/base/.venv/bin/python  # + assay before

What a script does, timed whole in one process: a list of N dicts
``{"inputs": ..., "outputs": ...}`` (built before the clock starts), ``evaluate(target,
data=..., evaluators=[two row evaluators], summary_evaluators=[one])``, ``list(results)``
and the summary score. assay stores everything in a fresh SQLite file; LangSmith runs in
local mode (``upload_results=False``, its fastest setting) with its data as the
``Example`` objects it requires (also built before the clock), against a closed loopback
port. Each side runs in its own process, alternating round by round (this shared
machine's speed drifts); the table gives each side's median rate and peak RSS, then the
ratio of each round's rates. A second table breaks assay's time down by stage: the inline
data becoming a stored dataset, the experiment, and reading the rows back. ``--before``
adds a third side, assay as another interpreter's environment has it (a checkout of an
earlier commit), in the same alternation.

Before the rounds, each assay side's modules are compiled to bytecode, as ``pip install``
compiles an installed package (LangSmith's is): this machine sets PYTHONDONTWRITEBYTECODE,
under which an editable checkout's modules were compiled from source inside the clock in
every round (``_rounds.compile_bytecode``).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _rounds import alternate, compile_bytecode, run_round


def target(inputs: dict) -> dict:
    return {"answer": inputs["x"] * 2}


def doubled(outputs: dict, reference_outputs: dict) -> bool:
    return outputs["answer"] == reference_outputs["answer"]


def positive(outputs: dict) -> float:
    return 1.0 if outputs["answer"] >= 0 else 0.0


def accuracy(outputs: list, reference_outputs: list) -> float:
    return sum(o["answer"] == r["answer"] for o, r in zip(outputs, reference_outputs)) / len(outputs)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def inline_data(n: int) -> list[dict[str, Any]]:
    return [{"inputs": {"x": i}, "outputs": {"answer": 2 * i}} for i in range(n)]


def check(rows: list[dict[str, Any]], n: int) -> None:
    """Every row came back with its output and both scores: nothing was skipped."""
    assert len(rows) == n, len(rows)
    assert all(len(row["evaluation_results"]["results"]) == 2 for row in rows)
    assert sum(row["run"].outputs["answer"] for row in rows) == n * (n - 1)


def evaluate_inline(data: list[dict[str, Any]], client: Any) -> Any:
    """The user's script: ``evaluate`` over inline data, two row evaluators and a summary."""
    from assay import evaluate

    return evaluate(
        target,
        data=data,
        evaluators=[doubled, positive],
        summary_evaluators=[accuracy],
        client=client,
        progress=False,
    )


# one side per process: each prints one JSON line
def child_assay(n: int, folder: str) -> dict[str, Any]:
    # evaluate imported before the clock, as LangSmith's side imports its own (~75 ms of
    # CPU inside the clock otherwise, for the import alone)
    from assay import Client, evaluate  # noqa: F401
    from assay.evaluation._data import resolve_data

    data = inline_data(n)
    client = Client(str(Path(folder) / "assay.db"))
    started = time.perf_counter()
    results = evaluate_inline(data, client)
    evaluated = time.perf_counter()
    rows = list(results)
    score = results.summary_results.results[0].score
    ended = time.perf_counter()
    check(rows, n)
    assert score == 1.0
    peak = peak_mb()
    # the stages: the import alone, again, into a second store (the content is new there)
    other = Client(str(Path(folder) / "import-only.db"))
    import_started = time.perf_counter()
    resolve_data(data, other.store)
    imported = time.perf_counter() - import_started
    client.close()
    other.close()
    return {
        "rate": n / (ended - started),
        "peak_mb": peak,
        "import_s": imported,
        "evaluate_s": evaluated - started,
        "iterate_s": ended - evaluated,
    }


def child_langsmith(n: int, folder: str) -> dict[str, Any]:
    import uuid
    from datetime import datetime, timezone

    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    dataset, now = uuid.uuid4(), datetime.now(timezone.utc)
    data = [
        Example(id=uuid.uuid4(), dataset_id=dataset, created_at=now, **record) for record in inline_data(n)
    ]
    client = Client(api_key="unused", api_url="http://127.0.0.1:9")  # nothing listens there
    started = time.perf_counter()
    results = evaluate(
        target,
        data=data,
        evaluators=[doubled, positive],
        summary_evaluators=[accuracy],
        upload_results=False,
        client=client,
    )
    rows = list(results)
    score = results._summary_results["results"][0].score
    ended = time.perf_counter()
    check(rows, n)
    assert score == 1.0
    return {"rate": n / (ended - started), "peak_mb": peak_mb()}


CHILDREN = {"assay": child_assay, "langsmith": child_langsmith, "before": child_assay}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=["assay", "langsmith"], help="run one side alone")
    parser.add_argument("--before", metavar="PYTHON", help="also time assay as this interpreter has it")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        side, n, folder = args.child
        print(json.dumps(CHILDREN[side](int(n), folder)))
        return
    sides = [args.only] if args.only else ["assay", "langsmith"]
    sides += ["before"] if args.before else []
    if "assay" in sides:
        compile_bytecode()
    if args.before:
        compile_bytecode(args.before)

    def measure(side: str) -> dict[str, Any]:
        python = args.before if side == "before" else sys.executable
        return run_round(__file__, [side, str(args.n)], python=python)

    def report(round_: int, side: str, got: dict[str, Any]) -> None:
        print(f"  round {round_ + 1} {side}: {got['rate']:,.0f} examples/s", flush=True)

    figures = alternate(sides, args.rounds, measure, report)
    print(f"\n{args.n:,} examples, median of {args.rounds} alternating rounds, each in its own process")
    print(f"{'side':>10} {'examples/s':>11} {'peak RSS MB':>12}")
    for side in sides:
        rates = [f["rate"] for f in figures[side]]
        peaks = [f["peak_mb"] for f in figures[side]]
        print(f"{side:>10} {statistics.median(rates):11,.0f} {statistics.median(peaks):12.0f}")
    for side in sides[1:]:
        ratios = [a["rate"] / b["rate"] for a, b in zip(figures["assay"], figures[side])]
        low, high = min(ratios), max(ratios)
        print(f"assay / {side}: median {statistics.median(ratios):.1f}x (rounds {low:.1f}-{high:.1f}x)")
    for side in ("assay", "before"):
        if side in figures:
            _stages(side, figures[side], args.n)


def _stages(side: str, figures: list[dict[str, Any]], n: int) -> None:
    print(f"\n{side} by stage (median seconds; the import measured again on its own)")
    for stage, label in (
        ("import_s", "inline data -> stored dataset"),
        ("evaluate_s", "evaluate() (import included)"),
        ("iterate_s", "list(results) + summary"),
    ):
        seconds = statistics.median(f[stage] for f in figures)
        print(f"{label:>32} {seconds:7.3f} s  ({n / seconds:10,.0f} examples/s)")


if __name__ == "__main__":
    main()
