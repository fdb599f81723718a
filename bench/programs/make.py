"""Write ``problems/<name>.json`` from ``catalog.py``: each problem's tests, with the
expected outputs its Python reference (``correct.py``) prints, its checker and its
solutions. Run it after editing the catalog: ``.venv/bin/python bench/programs/make.py``.
The reference is our own code, run here as a plain subprocess."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from catalog import PROBLEMS, Problem  # noqa: E402


def expected_output(problem: Problem, stdin: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", problem.solutions["correct.py"]],
        input=stdin.encode(),
        capture_output=True,
        timeout=120,
        check=True,
    )
    return done.stdout.decode()


def record(problem: Problem) -> dict[str, object]:
    inputs = problem.inputs(random.Random(f"assay-{problem.name}"))
    return {
        "name": problem.name,
        "statement": problem.statement,
        "checker": problem.checker,
        "checker_program": {"language": checker_language(problem), "code": problem.checker_code}
        if problem.checker_code
        else None,
        "time_limit": problem.time_limit,
        "tests": [{"input": text, "output": expected_output(problem, text)} for text in inputs],
        "solutions": {
            name: {"code": code, "expect": problem.expect.get(name, "accepted")}
            for name, code in problem.solutions.items()
        },
    }


def checker_language(problem: Problem) -> str:
    return "cpp" if "#include" in problem.checker_code else "python"


def main() -> None:
    folder = os.path.join(HERE, "problems")
    os.makedirs(folder, exist_ok=True)
    for problem in PROBLEMS:
        with open(os.path.join(folder, f"{problem.name}.json"), "w", encoding="utf-8") as handle:
            json.dump(record(problem), handle, indent=1, ensure_ascii=False)
            handle.write("\n")
    print(f"{len(PROBLEMS)} problems written to {folder}")


if __name__ == "__main__":
    main()
