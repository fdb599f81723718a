"""``cppcheck`` findings on generated C++ code, as a score like ruff's.

cppcheck parses and analyses the code; it compiles and runs nothing. It runs through
``_tools.run_tool`` (a subprocess with limits, in a private folder). Only the candidate's
file is read: system headers are not resolved (cppcheck does not need them to find bugs),
one preprocessor configuration is checked (a file of many ``#ifdef`` branches would
otherwise multiply the work), and inline suppressions are off, so the code cannot silence
a finding with a comment. cppcheck follows ``#include "/any/path"``, so it runs confined
(``run_tool(confine=True)``): the host's files are not there to read;
``metadata["confined"]`` says whether it was.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from typing import Any

from assay.errors import CaseError
from assay.evaluation import BaseEvaluator, EvaluationResult
from assay.evaluators.code._cases import code_from_run
from assay.evaluators.code._findings import findings_result, refused_result, unreadable_result
from assay.evaluators.code._tools import TOOL_TIMEOUT, ToolRun, oversized, require_tool, run_tool
from assay.sandbox import get_language
from assay.schemas import Example, Run

__all__ = ["CppcheckEvaluator", "DEFAULT_CHECKS"]

DEFAULT_CHECKS = ("warning", "style", "performance", "portability")
PACKAGE = "apt-get install cppcheck"


class CppcheckEvaluator(BaseEvaluator):
    """``max(0, 1 - findings / lines)``: 1.0 when cppcheck finds nothing. Code cppcheck
    cannot parse scores 0 with its message. Needs ``cppcheck``.

    Args:
        checks: cppcheck's ``--enable`` groups besides errors (default: warning, style,
            performance, portability).
        output_key: where the code is in ``run.outputs``.
        timeout: seconds cppcheck may take on one file.
    """

    option_names = ("checks", "output_key", "timeout")

    def __init__(self, name: str = "CppcheckEvaluator", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.checks = tuple(kwargs.get("checks", DEFAULT_CHECKS))
        self.output_key: str | None = kwargs.get("output_key")
        self.timeout = float(kwargs.get("timeout", TOOL_TIMEOUT))

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        cppcheck = require_tool("cppcheck", PACKAGE, "the C++ quality check")
        try:
            code = code_from_run(run, self.output_key, get_language("cpp"))
        except CaseError as exc:
            return EvaluationResult(key=self.name, score=0.0, feedback=exc.feedback, comment=str(exc))
        refused = oversized(code)
        if refused:
            return refused_result(self.name, refused)
        argv = [
            cppcheck,
            "--xml",
            "--quiet",
            "--language=c++",
            "--std=c++17",
            "--max-configs=1",
            "-j1",
            *([f"--enable={','.join(self.checks)}"] if self.checks else []),
            "solution.cpp",
        ]
        done = run_tool(argv, "", files={"solution.cpp": code}, timeout=self.timeout, confine=True)
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
        result.metadata["confined"] = done.confined
        return result


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
