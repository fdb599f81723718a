"""``cppcheck`` findings on generated C++ code, as a score like ruff's.

cppcheck parses and analyses the code; it compiles and runs nothing. It runs through
``_tools.run_tool`` (a subprocess with limits, in a private folder). Only the candidate's
file is read: system headers are not resolved (cppcheck does not need them to find bugs).
One preprocessor configuration is checked, the one the sandbox's compiler sees: g++'s
predefined macros (``g++ -dM -E`` with the sandbox's flags) are included first and
``__GNUC__`` pinned, so code under ``#ifdef __GNUC__`` is analysed and code under
``#ifdef _MSC_VER`` (which no compiler here builds) is not; a file of many ``#ifdef``
branches does not multiply the work. Inline suppressions (``// cppcheck-suppress``) are
off unless ``honour_suppressions=True``: the code cannot silence a finding with a
comment. cppcheck follows ``#include "/any/path"``, so it runs confined
(``run_tool(confine=True)``): the host's files are not there to read;
``metadata["confined"]`` says whether it was.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from typing import Any

from assay.errors import CaseError
from assay.evaluation import BaseEvaluator, EvaluationResult
from assay.evaluators.code._cases import code_from_run
from assay.evaluators.code._findings import findings_result, refused_result, unreadable_result
from assay.evaluators.code._suppressions import OPTION, honoured, mode
from assay.evaluators.code._tools import TOOL_TIMEOUT, ToolRun, oversized, require_tool, run_tool
from assay.sandbox import get_language
from assay.schemas import Example, Run

__all__ = ["CppcheckEvaluator", "DEFAULT_CHECKS"]

DEFAULT_CHECKS = ("warning", "style", "performance", "portability")
PACKAGE = "apt-get install cppcheck"
MACROS_FILE = "compiler_macros.h"
# the flags that decide g++'s macros, as the sandbox compiles C++ (its CPP_FLAGS; a test
# keeps the two the same)
COMPILER_FLAGS = ("-std=c++17", "-O1")
# g++'s own macros where g++ is absent (cppcheck still runs): a Linux x86-64 GCC 12
FALLBACK_MACROS = {"__GNUC__": "12", "__cplusplus": "201703L", "__linux__": "1", "__x86_64__": "1"}


class CppcheckEvaluator(BaseEvaluator):
    """``max(0, 1 - findings / lines)``: 1.0 when cppcheck finds nothing. Code cppcheck
    cannot parse scores 0 with its message. Needs ``cppcheck``.

    Args:
        checks: cppcheck's ``--enable`` groups besides errors (default: warning, style,
            performance, portability).
        output_key: where the code is in ``run.outputs``.
        timeout: seconds cppcheck may take on one file.
        honour_suppressions: let the code's ``// cppcheck-suppress`` comments count.
    """

    option_names = ("checks", "output_key", "timeout", OPTION)

    def __init__(self, name: str = "CppcheckEvaluator", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.checks = tuple(kwargs.get("checks", DEFAULT_CHECKS))
        self.output_key: str | None = kwargs.get("output_key")
        self.timeout = float(kwargs.get("timeout", TOOL_TIMEOUT))
        self.honour = honoured(kwargs)

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        cppcheck = require_tool("cppcheck", PACKAGE, "the C++ quality check")
        try:
            code = code_from_run(run, self.output_key, get_language("cpp"))
        except CaseError as exc:
            return EvaluationResult(key=self.name, score=0.0, feedback=exc.feedback, comment=str(exc))
        refused = oversized(code)
        if refused:
            return refused_result(self.name, refused)
        macros = compiler_macros()
        argv = [
            cppcheck,
            "--xml",
            "--quiet",
            "--language=c++",
            "--std=c++17",
            f"--include={MACROS_FILE}",
            f"-D__GNUC__={macros.get('__GNUC__', '12')}",  # one -D: that configuration only
            "-j1",
            *([f"--enable={','.join(self.checks)}"] if self.checks else []),
            *(["--inline-suppr"] if self.honour else []),
            "solution.cpp",
        ]
        files = {"solution.cpp": code, MACROS_FILE: _header(macros)}
        done = run_tool(argv, "", files=files, timeout=self.timeout, confine=True)
        findings = _findings(done.stderr)
        if findings is None or done.returncode != 0:
            return unreadable_result(self.name, "cppcheck", done, "cppcheck could not check the code.")
        syntax = [f for f in findings if f["rule"] in ("syntaxError", "internalAstError", "unknownMacro")]
        if syntax:
            failed = ToolRun(
                done.returncode, "", "\n".join(f"line {f['line']}: {f['message']}" for f in syntax)
            )
            return unreadable_result(self.name, "cppcheck", failed, "The code does not parse.")
        result = findings_result(self.name, "cppcheck", code, findings)
        result.metadata.update(confined=done.confined, suppressions=mode(self.honour))
        return result


@functools.cache
def compiler_macros() -> dict[str, str]:
    """What g++ predefines with the sandbox's flags (``FALLBACK_MACROS`` without g++)."""
    cxx = shutil.which("g++")
    if cxx is None:
        return dict(FALLBACK_MACROS)
    done = subprocess.run(
        [cxx, "-dM", "-E", "-x", "c++", *COMPILER_FLAGS, "-"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    macros = {}
    for line in done.stdout.splitlines():
        _, name, value = (line.split(" ", 2) + ["", ""])[:3]
        if line.startswith("#define ") and name.isidentifier():  # function-like macros skipped
            macros[name] = value
    return macros or dict(FALLBACK_MACROS)


def _header(macros: dict[str, str]) -> str:
    return "".join(f"#define {name} {value}\n" for name, value in macros.items())


def _findings(report: str) -> list[dict[str, Any]] | None:
    """cppcheck's XML report (on stderr): one ``error`` per finding, at its first location.
    None when there is no report (cppcheck died or was stopped)."""
    start = report.find("<?xml")
    if start < 0:
        return None
    try:
        root = ElementTree.fromstring(report[start:])
    except ElementTree.ParseError:
        return None
    found = []
    for error in root.iter("error"):
        location = error.find("location")
        line = location.get("line") if location is not None else None
        found.append(
            {
                "rule": error.get("id"),
                "severity": error.get("severity"),
                "message": error.get("msg"),
                "line": int(line) if line and line.isdigit() else None,
                "cwe": error.get("cwe"),
            }
        )
    return found
