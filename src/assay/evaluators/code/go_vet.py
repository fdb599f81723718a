"""``go vet`` findings on generated Go code, as a score like ruff's.

``go vet`` type-checks and analyses the code; it compiles nothing that runs. It runs
through ``_tools.run_tool`` (a subprocess with limits, a private folder) with the module
proxy off (no network) and a build cache of its own under the user's cache folder, so the
standard library's export data is built once, not at every row. GOPATH mode allows
relative imports (``import "../../some/dir"``), so it runs confined
(``run_tool(confine=True)``): no Go file of the host is there to read.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from assay.errors import CaseError
from assay.evaluation import BaseEvaluator, EvaluationResult
from assay.evaluators.code._cases import code_from_run
from assay.evaluators.code._findings import refused_result
from assay.evaluators.code._tools import oversized, require_tool, run_tool
from assay.schemas import Example, Run

__all__ = ["GoVetEvaluator"]

_PACKAGE = re.compile(r"^\s*package\s+\w+", re.MULTILINE)
_FENCES = type("GoFences", (), {"fence_tags": ("go", "golang")})()


def _go_cache() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "assay", "go-build")


class GoVetEvaluator(BaseEvaluator):
    """``max(0, 1 - findings / lines)``: 1.0 when ``go vet`` finds nothing. Code that does
    not type-check scores 0 with the compiler's first lines. A file without a ``package``
    clause is vetted as ``package solution``. Needs ``golang-go``."""

    option_names = ("output_key",)

    def __init__(self, name: str = "GoVetEvaluator", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.output_key: str | None = kwargs.get("output_key")

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        go = require_tool("go", "apt-get install golang-go", "go vet")
        try:
            code = code_from_run(run, self.output_key, _FENCES)
        except CaseError as exc:
            return EvaluationResult(key=self.name, score=0.0, feedback=exc.feedback, comment=str(exc))
        refused = oversized(code)
        if refused:
            return refused_result(self.name, refused)
        source = code if _PACKAGE.search(code) else f"package solution\n\n{code}"
        env = {"GOCACHE": _go_cache(), "GOPROXY": "off", "GO111MODULE": "off", "GOTOOLCHAIN": "local"}
        done = run_tool(
            [go, "vet", "-json", "solution.go"],
            "",
            files={"solution.go": source},
            env=env,
            limit_memory=False,
            confine=True,  # relative imports would read the host's Go files
            writable=[env["GOCACHE"]],
        )
        findings = _findings(done.stderr)
        if done.returncode != 0 and not findings:
            message = "\n".join(done.stderr.strip().splitlines()[:10]) or f"exit status {done.returncode}"
            return EvaluationResult(
                key=self.name,
                score=0.0,
                feedback="The code does not type-check.",
                comment=message,
                metadata={"findings": [], "compile_error": message},
            )
        lines = max(1, sum(1 for line in code.splitlines() if line.strip()))
        return EvaluationResult(
            key=self.name,
            score=max(0.0, 1.0 - len(findings) / lines),
            metadata={
                "findings": findings,
                "count": len(findings),
                "lines": lines,
                "confined": done.confined,
            },
            feedback="No go vet findings." if not findings else f"{len(findings)} go vet finding(s).",
            comment=", ".join(f"{f['analyzer']} line {f['line']}" for f in findings[:10]) or None,
        )


def _findings(output: str) -> list[dict[str, Any]]:
    """``go vet -json`` writes, per package, ``{analyzer: [{posn, message}]}`` to stderr
    after a ``# package`` line."""
    start = output.find("{")
    if start < 0:
        return []
    try:
        report, _ = json.JSONDecoder().raw_decode(output[start:])
    except ValueError:
        return []
    found = []
    for analyzers in report.values() if isinstance(report, dict) else ():
        for analyzer, items in (analyzers or {}).items():
            for item in items or []:
                position = str(item.get("posn", ""))
                line = position.rsplit(":", 2)[-2] if position.count(":") >= 2 else None
                found.append({"analyzer": analyzer, "message": item.get("message"), "line": _int(line)})
    return found


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
