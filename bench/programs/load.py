"""The benchmark's problems as examples for ``ProgramEvaluator``, and their solutions."""

from __future__ import annotations

import glob
import json
import os
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
LANGUAGES = {".py": "python", ".cpp": "cpp", ".java": "java", ".go": "go", ".js": "javascript"}


def problems() -> list[dict[str, Any]]:
    found = []
    for path in sorted(glob.glob(os.path.join(HERE, "problems", "*.json"))):
        with open(path, encoding="utf-8") as handle:
            found.append(json.load(handle))
    return found


def example_inputs(problem: dict[str, Any], solution: str) -> dict[str, Any]:
    """What an example of this problem holds for a run of ``solution``'s language."""
    checker = problem["checker_program"] if problem["checker"] == "program" else problem["checker"]
    return {
        "statement": problem["statement"],
        "tests": problem["tests"],
        "checker": checker,
        "time_limit": problem["time_limit"],
        "language": language_of(solution),
    }


def language_of(solution: str) -> str:
    return LANGUAGES[os.path.splitext(solution)[1]]
