"""Stdin/stdout programs: problems/s per language on our benchmark set (bench/programs),
``ProgramEvaluator`` in its sandbox against a plain, unisolated runner of the same tests
(compile once, a subprocess per test, compare), in the same run, alternating sides.

    .venv/bin/python bench/programs.py --rounds 3 --languages python cpp go java javascript

Each side judges every problem's correct solution in the language (all must pass).
The plain runner compares as our checkers do (tokens, exact lines, floats within the
tolerances) and runs checker programs as subprocesses on files.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "programs"))

from load import example_inputs, problems  # noqa: E402

from assay.evaluators import ProgramEvaluator  # noqa: E402
from assay.sandbox import SandboxIsolationWarning  # noqa: E402
from assay.schemas import Example, Run  # noqa: E402

EXTENSIONS = {"python": ".py", "cpp": ".cpp", "go": ".go", "java": ".java", "javascript": ".js"}


def solutions(language: str) -> list[tuple[dict[str, Any], str]]:
    name = "correct" + EXTENSIONS[language]
    return [(p, name) for p in problems() if name in p["solutions"]]


# -- our side ------------------------------------------------------------------------------------
def ours(cases: list[tuple[dict[str, Any], str]]) -> float:
    evaluator = ProgramEvaluator()
    started = time.perf_counter()
    for problem, name in cases:
        run = Run(
            name="bench", run_type="chain", inputs={}, outputs={"text": problem["solutions"][name]["code"]}
        )
        result = evaluator.evaluate(run, Example(inputs=example_inputs(problem, name), outputs={}))
        assert result.score == 1, (problem["name"], result.comment, result.error)
    return time.perf_counter() - started


# -- the plain runner ----------------------------------------------------------------------------
def build(language: str, code: str, folder: str) -> list[str]:
    if language == "python":
        path = os.path.join(folder, "main.py")
        _write(path, code)
        return [sys.executable, path]
    if language == "javascript":
        path = os.path.join(folder, "main.js")
        _write(path, code)
        return ["node", path]
    if language == "cpp":
        _write(os.path.join(folder, "main.cpp"), code)
        _run(["g++", "-std=c++17", "-O1", "-pipe", "-o", "main", "main.cpp"], folder)
        return [os.path.join(folder, "main")]
    if language == "go":
        _write(os.path.join(folder, "main.go"), code)
        env = {**os.environ, "GO111MODULE": "off", "GOCACHE": os.path.join(folder, ".cache")}
        subprocess.run(
            ["go", "build", "-o", "main", "main.go"], cwd=folder, check=True, capture_output=True, env=env
        )
        return [os.path.join(folder, "main")]
    _write(os.path.join(folder, "Main.java"), code)
    _run(["javac", "-nowarn", "-d", folder, "Main.java"], folder)
    return ["java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss16m", "-cp", folder, "Main"]


def plain(cases: list[tuple[dict[str, Any], str]], language: str) -> float:
    started = time.perf_counter()
    for problem, name in cases:
        with tempfile.TemporaryDirectory() as folder:
            argv = build(language, problem["solutions"][name]["code"], folder)
            checker = _checker(problem, folder)
            for test in problem["tests"]:
                done = subprocess.run(argv, input=test["input"].encode(), capture_output=True, timeout=60)
                assert done.returncode == 0 and _agree(problem, test, done.stdout, checker, folder), problem[
                    "name"
                ]
    return time.perf_counter() - started


def _checker(problem: dict[str, Any], folder: str) -> list[str] | None:
    program = problem.get("checker_program")
    if not program:
        return None
    checker_folder = os.path.join(folder, "checker")
    os.mkdir(checker_folder)
    return build(program["language"], program["code"], checker_folder)


def _agree(
    problem: dict[str, Any], test: dict[str, str], out: bytes, checker: list[str] | None, folder: str
) -> bool:
    expected = test["output"].encode()
    if checker is not None:
        paths = [os.path.join(folder, n) for n in ("input.txt", "output.txt", "answer.txt")]
        for path, data in zip(paths, (test["input"].encode(), out, expected)):
            with open(path, "wb") as handle:
                handle.write(data)
        return subprocess.run([*checker, *paths], capture_output=True, timeout=60).returncode == 0
    if problem["checker"] == "exact":
        return out.rstrip().splitlines() == expected.rstrip().splitlines()
    got, want = out.split(), expected.split()
    if problem["checker"] == "case_insensitive":
        return [t.lower() for t in got] == [t.lower() for t in want]
    if problem["checker"] == "floats":
        return len(got) == len(want) and all(
            a == b or math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-6) for a, b in zip(got, want)
        )
    return got == want


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _run(argv: list[str], folder: str) -> None:
    subprocess.run(argv, cwd=folder, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--languages", nargs="+", default=["python", "cpp"], choices=list(EXTENSIONS))
    args = parser.parse_args()
    warnings.simplefilter("ignore", SandboxIsolationWarning)
    load = os.getloadavg()[0]
    print(f"load average {load:.1f}; {args.rounds} rounds, sides alternating")
    for language in args.languages:
        cases = solutions(language)
        ours(cases[:1])  # the pool warm, the harness parts built: not the set's time
        times: dict[str, list[float]] = {"assay": [], "plain": []}
        for round_ in range(args.rounds):
            sides = [
                ("assay", lambda cases=cases: ours(cases)),
                ("plain", lambda cases=cases, language=language: plain(cases, language)),
            ]
            for side, measure in sides if round_ % 2 == 0 else sides[::-1]:
                times[side].append(measure())
        rates = {side: [len(cases) / t for t in spent] for side, spent in times.items()}
        ratio = statistics.median(times["assay"]) / statistics.median(times["plain"])
        print(
            f"{language:<10} {len(cases):>2} problems  assay {_rates(rates['assay'])}  "
            f"plain {_rates(rates['plain'])}  assay takes {ratio:.2f}x the plain runner's time"
        )


def _rates(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} problems/s ({min(values):.2f}-{max(values):.2f})"


if __name__ == "__main__":
    main()
