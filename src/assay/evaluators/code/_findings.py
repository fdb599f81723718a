"""What the linters' evaluators share: a score from a count of findings, and the score of
code the tool could not read or would not be given.

The score is ``max(0, 1 - findings / lines)`` (non-blank lines): 1.0 when clean, and
comparable across code of different lengths, as ruff's.
"""

from __future__ import annotations

from typing import Any

from assay.evaluation import EvaluationResult
from assay.evaluators.code._tools import ToolRun

__all__ = ["findings_result", "refused_result", "unreadable_result"]

MAX_LISTED = 10  # findings named in the comment; metadata has them all


def findings_result(key: str, tool: str, code: str, findings: list[dict[str, Any]]) -> EvaluationResult:
    """``findings``: dicts with at least ``rule`` and ``line``."""
    lines = max(1, sum(1 for line in code.splitlines() if line.strip()))
    return EvaluationResult(
        key=key,
        score=max(0.0, 1.0 - len(findings) / lines),
        feedback=f"No {tool} findings." if not findings else f"{len(findings)} {tool} finding(s).",
        comment=", ".join(f"{f['rule']} line {f['line']}" for f in findings[:MAX_LISTED]) or None,
        metadata={"tool": tool, "findings": findings, "count": len(findings), "lines": lines},
    )


def unreadable_result(key: str, tool: str, done: ToolRun, feedback: str) -> EvaluationResult:
    """Score 0 with the tool's first lines: the code does not parse, or the tool ran out of
    its limits on it (the code's doing either way)."""
    text = (done.stderr or done.stdout).strip()
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("at ")]  # JVM stacks
    message = "\n".join(lines[:10])[:2000] or f"exit status {done.returncode}"
    stopped = done.returncode < 0  # a signal: the CPU limit, or the timeout's kill
    return EvaluationResult(
        key=key,
        score=0.0,
        feedback=f"{tool} was stopped by its limits." if stopped else feedback,
        comment=message,
        metadata={"tool": tool, "findings": [], "tool_error": message},
    )


def refused_result(key: str, reason: str) -> EvaluationResult:
    """Score 0 for code not given to the tool (too large to check)."""
    return EvaluationResult(
        key=key, score=0.0, feedback="The code was not checked.", comment=reason, metadata={"refused": reason}
    )
