"""``ToolCodeEvaluator``: re-run the code an agent's Python tool executed, in the sandbox.

For each tool call in the trace that carries code (a ``tool`` child run, or an OpenAI
tool call, whose arguments hold ``code``), the code runs again as a program in the
sandbox. A call passes when it exits without error and, unless ``compare_output=False``,
prints what the trace recorded as the tool's output (trailing whitespace aside). The
score is the fraction of calls that pass.

A REPL keeps its variables from one call to the next: with ``stateful=True`` (the
default) call *k* runs after calls 1..k-1 in the same fresh process, their output
discarded, so it sees the state it saw in the agent's session.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from assay.errors import EvaluatorInputError, TrajectoryError
from assay.evaluation.evaluator import BaseEvaluator
from assay.evaluators.agents._calls import ToolCall, calls_of_run
from assay.sandbox import DATA_TOOLS, Limits, SandboxConfig, ScriptRun, get_language, get_pool, sandbox_site
from assay.schemas import EvaluationResult, Example, Run

__all__ = ["ToolCodeEvaluator"]

SHOWN_CHARS = 2000
RUNNER = """import os as _os, sys as _sys
_sys.path.insert(0, {site!r})
_namespace = {{"__name__": "__main__"}}
_saved = _os.dup(1), _os.dup(2)
_null = _os.open(_os.devnull, _os.O_WRONLY)
_os.dup2(_null, 1)
_os.dup2(_null, 2)
for _index, _code in enumerate({previous!r}):
    try:
        exec(compile(_code, f"<tool call {{_index}}>", "exec"), _namespace)
    except BaseException:
        pass  # the agent's session saw this error too, and went on
_sys.stdout.flush()
_sys.stderr.flush()
_os.dup2(_saved[0], 1)
_os.dup2(_saved[1], 2)
exec(compile({current!r}, "<tool call>", "exec"), _namespace)
"""


class ToolCodeEvaluator(BaseEvaluator):
    """Did the agent's tool code run, and does it give the recorded output?

    Args:
        code_keys: argument names that hold the code (the first present is used).
        tool_names: only these tools (default: every tool whose arguments hold code).
        compare_output: also require the recorded output.
        stateful: replay earlier calls first, as a REPL session would have.
        timeout: seconds per call.
        source: ``auto``, ``runs`` or ``messages`` (as for the trajectory evaluators).
        sandbox, limits: as for CodeCorrectnessEvaluator.
    """

    def __init__(
        self,
        name: str = "tool_code",
        *,
        code_keys: Sequence[str] = ("code",),
        tool_names: Sequence[str] | None = None,
        compare_output: bool = True,
        stateful: bool = True,
        timeout: float = 10.0,
        source: str = "auto",
        sandbox: SandboxConfig | None = None,
        limits: Limits | None = None,
    ) -> None:
        super().__init__(name=name)
        if timeout <= 0 or not code_keys:
            raise ValueError("timeout must be positive and code_keys non-empty")
        calls_of_run(Run(), source)  # an unknown source fails here
        self.code_keys, self.source = tuple(code_keys), source
        self.tool_names = set(tool_names) if tool_names is not None else None
        self.compare_output, self.stateful, self.timeout = compare_output, stateful, timeout
        self.sandbox_config = sandbox or SandboxConfig()
        self.limits = limits or Limits()

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        try:
            calls = calls_of_run(run, self.source)
        except TrajectoryError as exc:
            return EvaluationResult(key=self.name, score=0, comment=str(exc))
        with_code = [(call, code) for call in calls for code in [self._code(call)] if code is not None]
        if not with_code:
            keys = ", ".join(self.code_keys)
            raise EvaluatorInputError(
                f"the run has no tool call with code (argument {keys}) to re-run; "
                f"it made {len(calls)} tool call(s)"
            )
        site = sandbox_site(DATA_TOOLS)
        pool = get_pool(site.config(self.sandbox_config))
        rows = []
        for index, (call, code) in enumerate(with_code):
            previous = [c for _, c in with_code[:index]] if self.stateful else []
            script = RUNNER.format(site=site.path, previous=previous, current=code)
            done: ScriptRun = pool.run_script(
                get_language("python"), script, self.timeout * (len(previous) + 1), self.limits
            )
            rows.append(self._row(index, call, code, done))
        passed = sum(row["passed"] for row in rows)
        failed = [row for row in rows if not row["passed"]]
        return EvaluationResult(
            key=self.name,
            score=passed / len(rows),
            comment=f"{passed} of {len(rows)} tool call(s) re-ran as recorded"
            + (f"; first failure, call {failed[0]['index']}: {failed[0]['reason']}" if failed else ""),
            metadata={
                "calls": rows,
                "stateful": self.stateful,
                "sandbox": rows[0]["sandbox"] if rows else None,
            },
        )

    def _code(self, call: ToolCall) -> str | None:
        if self.tool_names is not None and call.name not in self.tool_names:
            return None
        for key in self.code_keys:
            value = call.args.get(key)
            if isinstance(value, str) and value.strip():
                return value
        return None

    def _row(self, index: int, call: ToolCall, code: str, done: ScriptRun) -> dict[str, Any]:
        stdout = done.output.stdout
        recorded = _text(call.output)
        reason = None
        if done.timed_out:
            reason = "timed out"
        elif done.exit_code != 0:
            reason = f"exit {done.exit_code}: {done.output.stderr.strip()[-300:]}"
        elif self.compare_output and recorded is not None and _norm(stdout) != _norm(recorded):
            reason = f"printed {_norm(stdout)[:200]!r}, the trace recorded {_norm(recorded)[:200]!r}"
        return {
            "index": index,
            "tool": call.name,
            "passed": reason is None,
            "reason": reason,
            "code": code[:SHOWN_CHARS],
            "stdout": stdout[-SHOWN_CHARS:],
            "stderr": done.output.stderr[-SHOWN_CHARS:],
            "recorded_output": recorded,
            "recorded_error": call.error,
            "exit_code": done.exit_code,
            "duration_ms": round(done.duration_ms, 1),
            "sandbox": done.sandbox,
        }


def _text(output: Any) -> str | None:
    if output is None:
        return None
    if isinstance(output, dict) and len(output) == 1:
        output = next(iter(output.values()))
    return output if isinstance(output, str) else json.dumps(output, default=str)


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())
