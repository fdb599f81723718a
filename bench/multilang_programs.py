"""HumanEval-X test programs for the problems of ``bench/data/multilang_humaneval.json``,
written from their checks (the same arguments and expected results) in HumanEval-X's own
formats: C++ ``int main(){ assert (f(...) == ...); }`` after ``#undef NDEBUG``, Java
``public class Main`` throwing ``AssertionError``. The types of the literals come from the
canonical solution's declaration (read with the checker's own parser)."""

from __future__ import annotations

import json
import os
from typing import Any

from assay.sandbox._declarations import checker_declaration, split_top

CPP_FLOATS = {"float", "double"}
CPP_INTS = {"int", "long", "long long", "unsigned", "size_t", "short"}


def _template(kind: str) -> tuple[str, list[str]]:
    kind = kind.replace("const ", "").rstrip("&").strip()
    if "<" not in kind:
        return kind, []
    base = kind[: kind.index("<")].strip().removeprefix("std::")
    return base, [part.strip() for part in split_top(kind[kind.index("<") + 1 : kind.rindex(">")])]


def cpp_literal(kind: str, value: Any) -> str:
    base, args = _template(kind)
    written = kind.replace("const ", "").rstrip("&").strip()
    if base == "optional":
        return f"{written}()" if value is None else f"{written}({cpp_literal(args[0], value)})"
    if base == "vector":
        return f"{written}{{{', '.join(cpp_literal(args[0], item) for item in value)}}}"
    if base in ("pair", "tuple"):
        return f"{written}({', '.join(cpp_literal(a, v) for a, v in zip(args, value))})"
    if base == "bool":
        return "true" if value else "false"
    if base in ("string", "std::string"):
        return f"string({json.dumps(value)})"
    if base in CPP_FLOATS:
        return repr(float(value))
    return f"{int(value)}LL" if base == "long long" else str(int(value))


def cpp_test(problem: dict[str, Any]) -> str:
    entry = problem["entry_point"]["cpp"]
    found = checker_declaration("cpp", "", problem["solutions"]["cpp"], entry)
    lines = ["#undef NDEBUG", "#include<assert.h>", "int main(){"]
    for case in problem["tests"]:
        args = ", ".join(cpp_literal(p.type, a) for p, a in zip(found.params, case["args"]))
        call, expected = f"{entry}({args})", cpp_literal(found.returns, case["expected"])
        if _template(found.returns)[0] in CPP_FLOATS:
            lines.append(f"    assert (fabs({call} - {expected}) < 1e-4);")
        else:
            lines.append(f"    assert ({call} == ({expected}));")  # (commas inside a macro argument)
    return "\n".join([*lines, "}", ""])


JAVA_PRIMITIVES = {"int", "long", "boolean", "double", "float", "char"}


def java_literal(kind: str, value: Any) -> str:
    base, args = _template(kind)
    if base == "Optional":
        return "Optional.empty()" if value is None else f"Optional.of({java_literal(args[0], value)})"
    if base in ("List", "ArrayList"):
        if not value:
            return f"new ArrayList<{args[0]}>()"
        return f"new ArrayList<>(Arrays.asList({', '.join(java_literal(args[0], v) for v in value)}))"
    if base in ("boolean", "Boolean"):
        return "true" if value else "false"
    if base == "String":
        return json.dumps(value)
    if base in ("double", "Double", "float", "Float"):
        return repr(float(value))
    return f"{int(value)}L" if base in ("long", "Long") else str(int(value))


def java_test(problem: dict[str, Any]) -> str:
    entry = problem["entry_point"]["java"]
    found = checker_declaration("java", "", problem["solutions"]["java"], entry)
    lines = [
        "public class Main {",
        "    public static void main(String[] args) {",
        "        Solution s = new Solution();",
    ]
    for case in problem["tests"]:
        arguments = ", ".join(java_literal(p.type, a) for p, a in zip(found.params, case["args"]))
        call, expected = f"s.{entry}({arguments})", java_literal(found.returns, case["expected"])
        if found.returns in ("double", "float"):
            condition = f"Math.abs({call} - {expected}) < 1e-6"
        elif found.returns in JAVA_PRIMITIVES:
            condition = f"{call} == {expected}"
        else:
            condition = f"Objects.equals({call}, {expected})"
        lines += [f"        if (!({condition})) {{", "            throw new AssertionError();", "        }"]
    return "\n".join([*lines, "    }", "}", ""])


GO_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "multilang_go_programs.json")


def go_test(problem: dict[str, Any]) -> str:
    """Go's HumanEval-X tests (``func TestX(t *testing.T)`` with testify's assert) are a
    data file of their own, written by ``bench/data/make_multilang_go_programs.py``."""
    with open(GO_DATA, encoding="utf-8") as handle:
        tests = {p["entry_point"]: p["test"] for p in json.load(handle)["problems"]}
    return str(tests[problem["entry_point"]["go"]])


TESTS = {"cpp": cpp_test, "java": java_test, "go": go_test}
