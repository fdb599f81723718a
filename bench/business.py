"""Business evaluators: unit-test generation, API-call overhead, trajectory match.

    .venv/bin/python bench/business.py [--problems 20] [--mutants 20] [--api 20] [--runs 10000]

Prints:
- unit-test generation: N small problems with a good generated suite each, M mutants per
  problem, evaluated two at a time (the sandbox pool's workers): problems/s and seconds
  per mutant (wall time over all mutants run);
- the API-call evaluator: seconds per example with the mock server and relay, next to
  the same program run as a plain sandbox script (the difference is the overhead);
- trajectory match over R runs with 3-6 traced tool calls each: runs/s per mode.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.evaluators import APICallEvaluator, TrajectoryMatchEvaluator, UnitTestGenerationEvaluator
from assay.sandbox import SandboxConfig, get_language, get_pool
from assay.schemas import EvaluationResults, Example, Run

PROBLEM = '''def score_{i}(values, limit={limit}):
    """Sum the values above a threshold, capped at the limit."""
    total = 0
    for value in values:
        if value > {threshold} and value % 2 == 0:
            total += value * {factor}
        elif value < -{threshold} or value == 0:
            total -= 1
    if total >= limit:
        return limit
    return total + {offset}
'''
SUITE = """from solution import score_{i}

def test_empty():
    assert score_{i}([]) == {offset}

def test_values():
    assert score_{i}([{big}, {big_odd}, 0]) == {big} * {factor} - 1 + {offset}
    assert score_{i}([-{below}]) == -1 + {offset}
    assert score_{i}([{threshold}]) == {offset}

def test_limit():
    assert score_{i}([{big}] * 1000) == {limit}
    assert score_{i}([{big}], limit={big} * {factor}) == {big} * {factor}
"""


def unit_test_problems(count: int) -> list[tuple[str, str]]:
    made = []
    for i in range(count):
        threshold, factor, offset = 3 + i % 5, 2 + i % 3, i % 4
        values = {
            "i": i,
            "limit": 1000 + i,
            "threshold": threshold,
            "factor": factor,
            "offset": offset,
            "big": 2 * threshold + 2,
            "big_odd": 2 * threshold + 3,
            "below": threshold + 1,
        }
        made.append((PROBLEM.format(**values), SUITE.format(**values)))
    return made


def bench_unit_tests(problems: int, mutants: int) -> None:
    evaluator = UnitTestGenerationEvaluator(max_mutants=mutants)
    cases = unit_test_problems(problems)
    evaluator.evaluate(
        Run(outputs={"output": cases[0][1]}), Example(inputs={"reference": cases[0][0]})
    )  # warm the pool

    def one(case: tuple[str, str]) -> EvaluationResults:
        result = evaluator.evaluate(Run(outputs={"output": case[1]}), Example(inputs={"reference": case[0]}))
        assert isinstance(result, EvaluationResults), result
        return result

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, cases))
    elapsed = time.perf_counter() - started
    ran = sum(len(r.results[1].metadata.get("mutants", [])) for r in results)
    passing = sum(r.results[0].score == 1 for r in results)
    scores = [float(r.results[1].score or 0) for r in results]
    print(
        f"unit-test generation: {problems} problems x {mutants} mutants: {elapsed:.1f} s, "
        f"{problems / elapsed:.2f} problems/s, {elapsed / max(ran, 1):.3f} s per mutant "
        f"({ran} mutants run; suites passing the reference: {passing}/{problems}; "
        f"mean mutation score {statistics.mean(scores):.2f})"
    )


API_SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "bench", "version": "1"},
    "paths": {
        "/items/{id}": {
            "get": {
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                "responses": {"200": {"content": {"application/json": {"example": {"id": 1, "name": "x"}}}}},
            }
        }
    },
}
API_CLIENT = """import json, os, urllib.request
base = os.environ.get("API_BASE_URL")
if base:
    print(json.dumps(json.load(urllib.request.urlopen(base + "/items/1"))))
"""


def bench_api(count: int) -> None:
    evaluator = APICallEvaluator()
    example = Example(
        inputs={"openapi": API_SPEC},
        outputs={
            "expected_calls": [{"method": "GET", "path": "/items/1"}],
            "expected_result": {"id": 1, "name": "x"},
        },
    )
    run = Run(outputs={"output": API_CLIENT})
    first = evaluator.evaluate(run, example)
    assert isinstance(first, EvaluationResults) and first.results[0].score == 1, first
    timings = []
    for _ in range(count):
        started = time.perf_counter()
        evaluator.evaluate(run, example)
        timings.append(time.perf_counter() - started)
    pool = get_pool(SandboxConfig())
    plain = []
    for _ in range(count):
        started = time.perf_counter()
        pool.run_script(get_language("python"), API_CLIENT, 10)
        plain.append(time.perf_counter() - started)
    with_mock, alone = statistics.median(timings), statistics.median(plain)
    print(
        f"API-call evaluator: {with_mock * 1000:.0f} ms per example (median of {count}), "
        f"plain sandbox script {alone * 1000:.0f} ms: overhead {(with_mock - alone) * 1000:.0f} "
        "ms (mock server, relay, one request, checks)"
    )


TOOLS = ["search", "weather", "flights", "hotel", "calendar", "email"]


def trajectory_runs(count: int, seed: int = 0) -> list[tuple[Run, Example]]:
    rng = random.Random(seed)
    made = []
    for _ in range(count):
        calls = [
            {"name": rng.choice(TOOLS), "args": {"q": rng.randrange(50), "n": 2}}
            for _ in range(rng.randint(3, 6))
        ]
        root = Run(name="agent")
        for call in calls:
            root.child_runs.append(
                Run(
                    name=call["name"],
                    run_type="tool",
                    inputs=call["args"],
                    outputs={"output": "ok"},
                    parent_run_id=root.id,
                )
            )
        reference = list(calls)
        if rng.random() < 0.3:
            rng.shuffle(reference)
        made.append((root, Example(outputs={"trajectory": reference})))
    return made


def bench_trajectory(count: int) -> None:
    data = trajectory_runs(count)
    for mode in ("strict", "unordered", "superset"):
        evaluator = TrajectoryMatchEvaluator(mode)
        started = time.perf_counter()
        passed = sum(
            evaluator.evaluate(run, example).score == 1  # type: ignore[union-attr]
            for run, example in data
        )
        elapsed = time.perf_counter() - started
        print(
            f"trajectory match ({mode}): {count} runs in {elapsed:.2f} s, "
            f"{count / elapsed:,.0f} runs/s ({passed} matched)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problems", type=int, default=20)
    parser.add_argument("--mutants", type=int, default=20)
    parser.add_argument("--api", type=int, default=20)
    parser.add_argument("--runs", type=int, default=10_000)
    args: Any = parser.parse_args()
    bench_trajectory(args.runs)
    bench_api(args.api)
    bench_unit_tests(args.problems, args.mutants)


if __name__ == "__main__":
    main()
