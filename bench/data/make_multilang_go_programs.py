"""Writes ``multilang_go_programs.json``: the Go problems of ``multilang_humaneval.json`` as
HumanEval-X style test programs (``func TestX(t *testing.T)`` with testify's assert), the
prompt being the canonical solution up to its declaration. Run it again after changing
the problems:

    .venv/bin/python bench/data/make_multilang_go_programs.py
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def literal(value: Any, kind: str) -> str:
    """``value`` (the test data's JSON) as a Go literal of ``kind``."""
    if kind.startswith("[]"):
        return kind + "{" + ", ".join(literal(item, kind[2:]) for item in value) + "}"
    if kind == "float64":
        return repr(float(value))
    if kind == "string":
        return json.dumps(value, ensure_ascii=False)
    if kind == "bool":
        return "true" if value else "false"
    return str(int(value))


def types(header: str) -> tuple[list[str], list[str]]:
    """Parameter and result types of a ``func Name(a, b int) (int, int) {`` header."""
    params_text, results_text = re.match(r"func \w+\((.*?)\)\s*(.*?)\s*\{", header).groups()  # type: ignore[union-attr]
    params: list[str] = []
    pending = 0
    for part in (p.strip() for p in params_text.split(",") if p.strip()):
        words = part.split()
        if len(words) == 1:
            pending += 1
            continue
        params.extend([words[1]] * (pending + 1))
        pending = 0
    results = [r.strip() for r in results_text.strip("()").split(",") if r.strip()]
    return params, results


def assertion(entry: str, params: list[str], results: list[str], case: dict[str, Any]) -> str:
    call = f"{entry}({', '.join(literal(a, k) for a, k in zip(case['args'], params))})"
    expected = case["expected"]
    if len(results) > 1:
        names = [f"r{i}" for i in range(len(results))]
        checks = "; ".join(f"assert.Equal({literal(e, k)}, {n})" for e, k, n in zip(expected, results, names))
        return f"{{ {', '.join(names)} := {call}; {checks} }}"
    (kind,) = results
    if kind.startswith("*"):
        if expected is None:
            return f"assert.Nil({call})"
        return f"assert.Equal({literal(expected, kind[1:])}, *{call})"
    if kind == "float64":
        return f"assert.InDelta({literal(expected, kind)}, {call}, 1e-6)"
    return f"assert.Equal({literal(expected, kind)}, {call})"


def program(problem: dict[str, Any]) -> dict[str, Any]:
    entry = problem["entry_point"]["go"]
    solution = problem["solutions"]["go"]
    header = re.search(rf"^func {entry}\(.*\{{$", solution, re.M)
    assert header is not None, entry
    prompt = solution[: header.end()].replace("package main\n\n", "", 1) + "\n"
    params, results = types(header.group(0))
    lines = [f"    {assertion(entry, params, results, case)}" for case in problem["tests"]]
    test = f"func Test{entry}(t *testing.T) {{\n    assert := assert.New(t)\n" + "\n".join(lines) + "\n}\n"
    return {
        "task_id": problem["task_id"].replace("HumanEval", "Go"),
        "entry_point": entry,
        "prompt": prompt,
        "canonical_solution": solution[header.end() + 1 :],
        "test": test,
    }


def main() -> None:
    with open(os.path.join(HERE, "multilang_humaneval.json"), encoding="utf-8") as handle:
        problems = json.load(handle)["problems"]
    data = {
        "source": "bench/data/multilang_humaneval.json (Go), written by make_multilang_go_programs.py",
        "problems": [program(p) for p in problems],
    }
    with open(os.path.join(HERE, "multilang_go_programs.json"), "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, ensure_ascii=False)
        handle.write("\n")


if __name__ == "__main__":
    main()
