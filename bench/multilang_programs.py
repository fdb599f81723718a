"""Test-program mode for ``bench/multilang.py --mode programs``: HumanEval-X style test
programs, one data file per language (``bench/data/multilang_<language>_programs.json``:
task_id, entry_point, prompt, canonical_solution, test). Each problem is one job: the
test program and the candidate compiled side by side, then the test against the
candidate. The canonical solutions must all pass; a wrong answer (``return`` of the zero
value is not tried) is measured by the tests, not here."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.sandbox import SandboxConfig, get_language, get_pool

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def data_file(language: str) -> str:
    return os.path.join(DATA, f"multilang_{language}_programs.json")


def load(language: str) -> list[dict[str, Any]]:
    with open(data_file(language), encoding="utf-8") as handle:
        return list(json.load(handle)["problems"])


def run_one(config: SandboxConfig, language: str, problem: dict[str, Any]) -> dict[str, Any]:
    run = get_pool(config).run_test_program(
        get_language(language),
        problem["prompt"] + problem["canonical_solution"],
        problem["test"],
        problem["entry_point"],
        timeout=20,
        prompt=problem["prompt"],
    )
    return {
        "task_id": problem["task_id"],
        "passed": run.passed,
        "duration_ms": run.duration_ms,
        "compile_ms": run.compile_ms or 0.0,
        "verdict": run.verdict,
    }


def run_programs(config: SandboxConfig, language: str, workers: int) -> dict[str, Any]:
    problems = load(language)
    run_one(config, language, problems[0])  # warm the pools
    started = time.monotonic()
    with ThreadPoolExecutor(workers) as executor:
        results = list(executor.map(lambda p: run_one(config, language, p), problems))
    wall = time.monotonic() - started
    failed = [r for r in results if not r["passed"]]
    for result in failed:
        print(f"  FAILED {language} {result['task_id']}: {result['verdict']}")
    compile_ms = sum(r["compile_ms"] for r in results)
    job_ms = sum(r["duration_ms"] for r in results)
    return {
        "problems": len(results),
        "passed": len(results) - len(failed),
        "per_second": len(results) / wall,
        "wall_s": wall,
        "compile_share": compile_ms / job_ms if job_ms else 0.0,
        "compile_ms_mean": compile_ms / len(results),
    }
