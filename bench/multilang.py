"""HumanEval-X style runs in Go, Java, C++ and TypeScript (and Python, for scale).

    .venv/bin/python bench/multilang.py [--workers N] [--backend NAME] [--languages go,java,...]
                                        [--skip-cold] [--mode cases|programs|both]
                                        [--only HumanEval/5,HumanEval/9,...] [--candidates K]

The problems are ``bench/data/multilang_humaneval.json``: 50 HumanEval problems ported by
hand, one canonical solution per language, with argument/result checks as data (no
download at run time). Every solution runs in test-case mode (all must pass); each
problem is one job: a compile step, then one call per check. Prints per language:
problems per second with N jobs in parallel, the share of job time spent compiling, and
the warm-start gain: the same run with the prebuilt harness parts (the C++ precompiled
header, the compiled Java harness classes) switched off, so every job compiles them too.

``--mode programs`` (C++, Java and Go) runs the same checks as HumanEval-X test programs
(``bench/multilang_programs.py`` writes them in HumanEval-X's format; Go's are the data file
``bench/data/multilang_go_programs.json``): each problem is one
job of two sandboxes, the candidate's and the test program's, both compiled.

``--candidates K`` runs each problem as pass@k does: K candidates, each its own job (the
canonical solution K times, so identical sources, as repeated runs and low-temperature
samples give). problems/s then counts a problem once all K of its candidates are judged.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from multilang_programs import TESTS as PROGRAM_TESTS  # bench/ is the script's folder

from assay.sandbox import Call, SandboxConfig, get_language, get_pool, values_equal
from assay.sandbox import _toolchains as toolchains

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "multilang_humaneval.json")
WARM_STARTS = {"cpp": "precompiled harness header", "java": "prebuilt harness classes"}


def load_problems() -> list[dict[str, Any]]:
    with open(DATA, encoding="utf-8") as handle:
        return list(json.load(handle)["problems"])


def select(problems: list[dict[str, Any]], only: str) -> list[dict[str, Any]]:
    """The problems named in ``only`` (task ids, comma-separated; empty: all of them)."""
    if not only:
        return problems
    wanted = [task.strip() for task in only.split(",") if task.strip()]
    unknown = sorted(set(wanted) - {p["task_id"] for p in problems})
    if unknown:
        raise SystemExit(f"--only: no such task id in {DATA}: {', '.join(unknown)}")
    return [p for p in problems if p["task_id"] in wanted]


def run_problem(config: SandboxConfig, language: str, problem: dict[str, Any]) -> dict[str, Any]:
    calls = [Call(tuple(test["args"])) for test in problem["tests"]]
    run = get_pool(config).run_function(
        get_language(language),
        problem["solutions"][language],
        problem["entry_point"][language],
        calls,
        timeout=20,
    )
    passed = run.load_failure is None and all(
        o.ok and values_equal(t["expected"], o.value) for t, o in zip(problem["tests"], run.outcomes)
    )
    return {
        "task_id": problem["task_id"],
        "passed": passed,
        "duration_ms": run.duration_ms,
        "compile_ms": run.compile_ms or 0.0,
        "failure": None if passed else (run.load_failure or [o for o in run.outcomes if not o.ok][:1]),
    }


def run_program(config: SandboxConfig, language: str, problem: dict[str, Any]) -> dict[str, Any]:
    """The problem as a test program against the canonical solution (no prompt: the
    proxy's declaration is read from the solution's header)."""
    run = get_pool(config).run_test_program(
        get_language(language),
        problem["solutions"][language],
        PROGRAM_TESTS[language](problem),
        problem["entry_point"][language],
        timeout=20,
    )
    return {
        "task_id": problem["task_id"],
        "passed": run.passed,
        "duration_ms": run.duration_ms,
        "compile_ms": run.compile_ms or 0.0,
        "failure": None if run.passed else run.verdict,
    }


def run_language(
    config: SandboxConfig,
    language: str,
    problems: list[dict[str, Any]],
    workers: int,
    programs: bool = False,
    candidates: int = 1,
) -> dict[str, Any]:
    job = run_program if programs else run_problem
    job(config, language, problems[0])  # warm the pool (and build prebuilt parts)
    jobs = [problem for problem in problems for _ in range(candidates)]  # a problem's candidates together
    started = time.monotonic()
    with ThreadPoolExecutor(workers) as executor:
        results = list(executor.map(lambda p: job(config, language, p), jobs))
    wall = time.monotonic() - started
    failed = [r for r in results if not r["passed"]]
    for result in failed:
        print(f"  FAILED {language} {result['task_id']}: {result['failure']}")
    compile_ms = sum(r["compile_ms"] for r in results)
    job_ms = sum(r["duration_ms"] for r in results)
    return {
        "problems": len(results),
        "passed": len(results) - len(failed),
        "per_second": len(problems) / wall,
        "wall_s": wall,
        "compile_share": compile_ms / job_ms if job_ms else 0.0,
        "compile_ms_mean": compile_ms / len(results),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--languages", default="go,java,cpp,typescript")
    parser.add_argument("--skip-cold", action="store_true", help="do not measure the warm-start gain")
    parser.add_argument("--mode", choices=("cases", "programs", "both"), default="both")
    parser.add_argument("--only", default="", help="comma-separated task ids (default: every problem)")
    parser.add_argument(
        "--candidates", type=int, default=1, help="K candidates per problem, as pass@k runs them"
    )
    args = parser.parse_args()
    problems = select(load_problems(), args.only)
    config = SandboxConfig(backend=args.backend, workers=args.workers)
    if args.candidates < 1:
        raise SystemExit(f"--candidates: {args.candidates} is not a count of candidates (give 1 or more)")
    print(
        f"{len(problems)} problems x {args.candidates} candidates, {args.workers} jobs in parallel, "
        f"backend {get_pool(config).backend.name}"
    )
    languages = args.languages.split(",")
    if args.mode != "programs":
        run_cases(config, languages, problems, args)
    if args.mode != "cases":
        programs = [lang for lang in languages if lang in PROGRAM_TESTS]
        run_programs(config, programs, problems, args.workers, args.candidates)
    get_pool(config).close()


def run_programs(
    config: SandboxConfig, languages: list[str], problems: list[dict[str, Any]], workers: int, candidates: int
) -> None:
    print("test-program mode (HumanEval-X test programs; compile ms: both sides, until the test starts)")
    print(f"{'language':<11} {'passed':>7} {'problems/s':>11} {'compile share':>14} {'compile ms':>11}")
    for language in languages:
        found = run_language(config, language, problems, workers, programs=True, candidates=candidates)
        print(
            f"{language:<11} {found['passed']:>3}/{found['problems']:<3} {found['per_second']:>11.2f} "
            f"{found['compile_share']:>13.0%} {found['compile_ms_mean']:>11.0f}"
        )


def run_cases(config: SandboxConfig, languages: list[str], problems: list[dict[str, Any]], args: Any) -> None:
    print("test-case mode")
    print(
        f"{'language':<11} {'passed':>7} {'problems/s':>11} {'compile share':>14} {'compile ms':>11}  warm start"
    )
    for language in languages:
        missing = get_language(language).runtime_missing(get_pool(config).runtime)
        if missing:
            print(f"{language:<11} skipped: {missing}")
            continue
        warm = run_language(config, language, problems, args.workers, candidates=args.candidates)
        gain = "n/a (nothing prebuilt: see README)"
        if language in WARM_STARTS and not args.skip_cold:
            toolchains.prepare(language)
            kept = toolchains._prebuilt[language]
            toolchains._prebuilt[language] = ""  # every job compiles the harness part itself
            try:
                cold = run_language(config, language, problems, args.workers, candidates=args.candidates)
            finally:
                toolchains._prebuilt[language] = kept
            gain = (
                f"{WARM_STARTS[language]}: {cold['compile_ms_mean']:.0f} -> {warm['compile_ms_mean']:.0f} ms "
                f"compile, {warm['per_second'] / cold['per_second']:.2f}x problems/s"
            )
        print(
            f"{language:<11} {warm['passed']:>3}/{warm['problems']:<3} {warm['per_second']:>11.2f} "
            f"{warm['compile_share']:>13.0%} {warm['compile_ms_mean']:>11.0f}  {gain}"
        )


if __name__ == "__main__":
    main()
