"""``checkstyle`` findings on generated Java code, as a score like ruff's.

Checkstyle parses the code and applies a rule set; it compiles and runs nothing. The rule
set here (``RULES``) is about coding problems, not layout (layout is what
``CodeStyleEvaluator`` measures): empty blocks and catches, ``==`` on strings, a
``switch`` without ``default`` or falling through, ``equals`` without ``hashCode``,
assignments inside expressions, loop variables changed in the loop, boolean expressions
that simplify, unused imports, and nesting and complexity bounds. Suppression comments are
not honoured (no suppression filter is configured), so the code cannot silence a rule.
It runs through ``_tools.run_tool`` with a small JVM (``_tools.JVM_FLAGS``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from typing import Any

from assay.errors import CaseError
from assay.evaluation import BaseEvaluator, EvaluationResult
from assay.evaluators.code._cases import code_from_run
from assay.evaluators.code._findings import findings_result, refused_result, unreadable_result
from assay.evaluators.code._tools import JVM_FLAGS, TOOL_TIMEOUT, oversized, require_tool, run_tool
from assay.sandbox import get_language
from assay.schemas import Example, Run

__all__ = ["CheckstyleEvaluator", "RULES"]

PACKAGE = "apt-get install checkstyle"
_CHECKS = """
    <module name="EmptyBlock"/>
    <module name="EmptyCatchBlock"/>
    <module name="EmptyStatement"/>
    <module name="EqualsHashCode"/>
    <module name="CovariantEquals"/>
    <module name="StringLiteralEquality"/>
    <module name="MissingSwitchDefault"/>
    <module name="FallThrough"/>
    <module name="DefaultComesLast"/>
    <module name="InnerAssignment"/>
    <module name="ModifiedControlVariable"/>
    <module name="SimplifyBooleanExpression"/>
    <module name="SimplifyBooleanReturn"/>
    <module name="OneStatementPerLine"/>
    <module name="AvoidNestedBlocks"/>
    <module name="NoFinalizer"/>
    <module name="UpperEll"/>
    <module name="ArrayTypeStyle"/>
    <module name="UnusedImports"/>
    <module name="RedundantImport"/>
    <module name="NestedIfDepth"><property name="max" value="3"/></module>
    <module name="NestedForDepth"><property name="max" value="2"/></module>
    <module name="BooleanExpressionComplexity"/>
    <module name="CyclomaticComplexity"><property name="max" value="12"/></module>
"""
RULES = (
    '<?xml version="1.0"?>\n'
    '<!DOCTYPE module PUBLIC "-//Checkstyle//DTD Checkstyle Configuration 1.3//EN"'
    ' "https://checkstyle.org/dtds/configuration_1_3.dtd">\n'
    f'<module name="Checker">\n  <module name="TreeWalker">{_CHECKS}  </module>\n</module>\n'
)


class CheckstyleEvaluator(BaseEvaluator):
    """``max(0, 1 - findings / lines)``: 1.0 when checkstyle finds nothing under ``RULES``
    (or ``rules``, a checkstyle configuration as XML text). Code checkstyle cannot parse
    scores 0 with its message. Needs ``checkstyle`` (Debian's, 8.36).

    Args:
        rules: a checkstyle configuration (XML text) instead of ``RULES``.
        output_key: where the code is in ``run.outputs``.
        timeout: seconds checkstyle may take on one file.
    """

    option_names = ("rules", "output_key", "timeout")

    def __init__(self, name: str = "CheckstyleEvaluator", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.rules = str(kwargs.get("rules", RULES))
        self.output_key: str | None = kwargs.get("output_key")
        self.timeout = float(kwargs.get("timeout", TOOL_TIMEOUT))

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        checkstyle = require_tool("checkstyle", PACKAGE, "the Java quality check")
        try:
            code = code_from_run(run, self.output_key, get_language("java"))
        except CaseError as exc:
            return EvaluationResult(key=self.name, score=0.0, feedback=exc.feedback, comment=str(exc))
        refused = oversized(code)
        if refused:
            return refused_result(self.name, refused)
        done = run_tool(
            [checkstyle, "-c", "rules.xml", "-f", "xml", "Solution.java"],
            "",
            files={"rules.xml": self.rules, "Solution.java": code},
            env={"JAVA_ARGS": " ".join(JVM_FLAGS)},
            timeout=self.timeout,
        )
        findings = _findings(done.stdout)
        # checkstyle exits with the number of findings; a parse failure is an exception
        if findings is None or "CheckstyleException" in done.stderr:
            return unreadable_result(self.name, "checkstyle", done, "checkstyle could not read the code.")
        result = findings_result(self.name, "checkstyle", code, findings)
        # RULES configures no suppression filter; other rules may (the caller's choice)
        result.metadata["suppressions"] = "ignored" if self.rules == RULES else "as the rules configure"
        return result


def _findings(report: str) -> list[dict[str, Any]] | None:
    """checkstyle's XML report: one ``error`` per finding; None when there is none (it
    could not parse the code, or was stopped)."""
    start, end = report.find("<?xml"), report.rfind("</checkstyle>")
    if start < 0 or end < 0:
        return None
    try:
        root = ElementTree.fromstring(report[start : end + len("</checkstyle>")])
    except ElementTree.ParseError:
        return None
    found = []
    for error in root.iter("error"):
        line = error.get("line")
        source = error.get("source") or ""
        found.append(
            {
                "rule": source.rsplit(".", 1)[-1].removesuffix("Check"),
                "severity": error.get("severity"),
                "message": error.get("message"),
                "line": int(line) if line and line.isdigit() else None,
            }
        )
    return found
