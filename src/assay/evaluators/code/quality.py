"""Code quality of generated code: lint findings (ruff) and security findings (bandit)
for Python, ``go vet`` for Go (``go_vet``), cppcheck for C++ (``cppcheck``), checkstyle
for Java (``checkstyle``). Each tool runs as a subprocess with limits on the code, which
it only parses, never executes. ruff and bandit come with ``pip install 'assay[code]'``,
go vet with ``golang-go``, the others with the Debian packages of their names.
``quality_evaluators(language)`` gives a language's evaluators, and says so when no
maintained tool is packaged for it."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from assay.errors import CaseError, ToolMissingError
from assay.evaluation import BaseEvaluator, EvaluationResult
from assay.evaluators.code._cases import code_from_run
from assay.evaluators.code._findings import refused_result, unreadable_result
from assay.evaluators.code._suppressions import OPTION, honoured, mode
from assay.evaluators.code._tools import ToolRun, oversized
from assay.sandbox import get_language
from assay.schemas import Example, Run

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
ToolMissing = ToolMissingError

__all__ = [
    "BanditSecurityEvaluator",
    "NO_QUALITY_TOOL",
    "RuffLintEvaluator",
    "SEVERITY_WEIGHTS",
    "TOOL_TIMEOUT",
    "ToolMissingError",
    "quality_evaluators",
]


TOOL_TIMEOUT = 60.0
SEVERITY_WEIGHTS = {"HIGH": 1.0, "MEDIUM": 0.5, "LOW": 0.1}


#: languages with no quality evaluator, and why (what is packaged, and its state)
NO_QUALITY_TOOL = {
    "javascript": "Debian's eslint is 6.4 from 2019, unmaintained; no linter is wired",
    "typescript": "no linter is packaged (typescript-eslint is npm-only and needs a project set-up)",
}


def quality_evaluators(language: str) -> list[BaseEvaluator]:
    """The quality evaluators for ``language``, or ToolMissingError saying that none exists."""
    name = language.lower()
    if name in ("python", "py"):
        return [RuffLintEvaluator(), BanditSecurityEvaluator()]
    if name in ("go", "golang"):
        from assay.evaluators.code.go_vet import GoVetEvaluator

        return [GoVetEvaluator()]
    if name in ("cpp", "c++"):
        from assay.evaluators.code.cppcheck import CppcheckEvaluator

        return [CppcheckEvaluator()]
    if name == "java":
        from assay.evaluators.code.checkstyle import CheckstyleEvaluator

        return [CheckstyleEvaluator()]
    reason = NO_QUALITY_TOOL.get(name, "assay knows no quality tool for it")
    raise ToolMissingError(f"no code-quality tool for {language!r}: {reason}")


def _code(run: Run, output_key: str | None) -> str | None:
    """The code as CodeCorrectnessEvaluator finds it (same keys, fences stripped)."""
    try:
        return code_from_run(run, output_key, get_language("python"))
    except CaseError:
        return None


def _run_tool(module: str, args: Sequence[str], code: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        raise ToolMissingError(f"{module} is not installed: pip install 'assay[code]'")
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        input=code,
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        check=False,
    )


def _refusal(key: str, code: str | None) -> EvaluationResult | None:
    """Score 0 for no code, or code too large to give to a tool; None to go on."""
    if code is None:
        return _no_code(key)
    reason = oversized(code)
    return refused_result(key, reason) if reason else None


def _no_code(key: str) -> EvaluationResult:
    return EvaluationResult(
        key=key, score=0.0, feedback="No code generated.", comment="the run has no code to check"
    )


class RuffLintEvaluator(BaseEvaluator):
    """Lint findings as a score: ``max(0, 1 - findings / lines)`` (1.0 when clean). Code
    ruff cannot parse scores 0 with ruff's message.

    Args:
        select: ruff rule selectors (default: ruff's own defaults).
        output_key: where the code is in ``run.outputs``.
        honour_suppressions: let the code's ``# noqa`` comments count (by default ruff
            runs with ``--ignore-noqa``: the code cannot silence its own findings).
    """

    option_names = ("select", "output_key", OPTION)

    def __init__(self, name: str = "RuffLintEvaluator", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.select: list[str] | None = kwargs.get("select")
        self.output_key: str | None = kwargs.get("output_key")
        self.honour = honoured(kwargs)

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        code = _code(run, self.output_key)
        refused = _refusal(self.name, code)
        if refused is not None or code is None:
            return refused or _no_code(self.name)
        args = [
            "check",
            "--output-format",
            "json",
            "--no-cache",
            "--isolated",
            "--exit-zero",
            "--stdin-filename",
            "solution.py",
        ]
        if self.select:
            args += ["--select", ",".join(self.select)]
        if not self.honour:
            args.append("--ignore-noqa")
        done = _run_tool("ruff", [*args, "-"], code)
        if done.returncode != 0:
            raise RuntimeError(f"ruff failed (exit {done.returncode}): {done.stderr.strip()}")
        findings = [_ruff_finding(item) for item in json.loads(done.stdout or "[]")]
        unparsed = [f for f in findings if f["code"] in _RUFF_SYNTAX]
        if unparsed:
            return self._unparsable(unparsed)
        lines = max(1, sum(1 for line in code.splitlines() if line.strip()))
        score = max(0.0, 1.0 - len(findings) / lines)
        summary = ", ".join(f"{f['code']} line {f['line']}" for f in findings[:10])
        return EvaluationResult(
            key=self.name,
            score=score,
            feedback="No lint findings." if not findings else f"{len(findings)} lint finding(s).",
            comment=summary or None,
            metadata={
                "findings": findings,
                "count": len(findings),
                "lines": lines,
                "suppressions": mode(self.honour),
            },
        )

    def _unparsable(self, errors: list[dict[str, Any]]) -> EvaluationResult:
        message = "\n".join(f"line {f['line']}: {f['message']}" for f in errors[:10])
        result = unreadable_result(
            self.name, "ruff", ToolRun(0, "", message), "ruff could not parse the code."
        )
        result.metadata["suppressions"] = mode(self.honour)
        return result


# what ruff reports for code it cannot parse (newer ruff: ``invalid-syntax``; older: E999)
_RUFF_SYNTAX = frozenset({"invalid-syntax", "E999", None})


def _ruff_finding(item: dict[str, Any]) -> dict[str, Any]:
    location = item.get("location") or {}
    return {
        "code": item.get("code"),
        "message": item.get("message"),
        "line": location.get("row"),
        "column": location.get("column"),
    }


class BanditSecurityEvaluator(BaseEvaluator):
    """Security findings by severity. Score ``max(0, 1 - sum of weights)`` with HIGH 1.0,
    MEDIUM 0.5, LOW 0.1: one high-severity finding scores 0, a clean file 1.0. Code bandit
    cannot parse (Python 2, a syntax error) scores 0 with bandit's message: what bandit did
    not read it cannot vouch for.

    ``honour_suppressions=True`` lets the code's ``# nosec`` comments count; by default
    bandit runs with ``--ignore-nosec``."""

    option_names = ("output_key", "weights", OPTION)

    def __init__(self, name: str = "BanditSecurityEvaluator", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.output_key: str | None = kwargs.get("output_key")
        self.weights = dict(SEVERITY_WEIGHTS, **kwargs.get("weights", {}))
        self.honour = honoured(kwargs)

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        code = _code(run, self.output_key)
        refused = _refusal(self.name, code)
        if refused is not None or code is None:
            return refused or _no_code(self.name)
        args = ["-f", "json", "-q", *([] if self.honour else ["--ignore-nosec"]), "-"]
        done = _run_tool("bandit", args, code)
        if done.returncode not in (0, 1) or not done.stdout.strip():
            raise RuntimeError(f"bandit failed (exit {done.returncode}): {done.stderr.strip()}")
        report = json.loads(done.stdout)
        if report.get("errors"):
            return self._unparsable(report["errors"])
        findings = [_bandit_finding(item) for item in report.get("results", [])]
        by_severity = {
            level: sum(f["severity"] == level for f in findings) for level in ("HIGH", "MEDIUM", "LOW")
        }
        penalty = sum(self.weights.get(f["severity"], 0.0) for f in findings)
        counts = ", ".join(f"{n} {level.lower()}" for level, n in by_severity.items() if n)
        return EvaluationResult(
            key=self.name,
            score=max(0.0, 1.0 - penalty),
            feedback="No security findings." if not findings else f"Security findings: {counts}.",
            comment="\n".join(
                f"{f['test_id']} ({f['severity']}) line {f['line']}: {f['text']}" for f in findings
            )
            or None,
            metadata={"findings": findings, "by_severity": by_severity, "suppressions": mode(self.honour)},
        )

    def _unparsable(self, errors: list[dict[str, Any]]) -> EvaluationResult:
        message = "\n".join(str(error.get("reason", error)) for error in errors[:10])
        result = unreadable_result(
            self.name, "bandit", ToolRun(0, "", message), "bandit could not parse the code."
        )
        result.metadata["suppressions"] = mode(self.honour)
        return result


def _bandit_finding(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "test_id": item.get("test_id"),
        "severity": item.get("issue_severity"),
        "confidence": item.get("issue_confidence"),
        "text": item.get("issue_text"),
        "line": item.get("line_number"),
        "cwe": (item.get("issue_cwe") or {}).get("id"),
    }
