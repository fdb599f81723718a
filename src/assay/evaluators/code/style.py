"""Whether generated code is formatted the way its language's standard formatter would.

``CodeStyleEvaluator`` runs the formatter on the code (see ``_tools`` for how) and
compares: two metrics per row,

- ``<name>``: 1 when the formatter leaves the code as it is, else 0 (higher is better):
  comparable across problems and languages, and its mean is the share of formatted rows;
- ``<name>_diff_lines``: how many lines the formatter would add or remove (lower is
  better, 0 when formatted): how far from formatted, which grows with the code's length.

The unified diff is in the first metric's metadata. Code the formatter cannot parse, or on
which it runs out of its limits (time, memory), scores 0 with the formatter's message and
has no diff size, as does code over ``_tools.MAX_SOURCE_BYTES`` (not given to the
formatter at all): the code's doing. A formatter that is not installed is an error naming
the package (the setup's doing). The formatters are listed in ``_formatters``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from assay.errors import CaseError, ToolMissingError, UnknownLanguageError
from assay.evaluation import BaseEvaluator, EvaluationResult, EvaluationResults
from assay.evaluators.code._cases import code_from_run, inputs_of
from assay.evaluators.code._findings import refused_result
from assay.evaluators.code._formatters import ALIASES, FORMATTERS, Formatter
from assay.evaluators.code._suppressions import OPTION, defuse_format_switches, honoured, mode
from assay.evaluators.code._tools import TOOL_TIMEOUT, ToolRun, oversized, run_tool
from assay.sandbox import get_language
from assay.schemas import Example, Run

LOWER_IS_BETTER = {"direction": "lower", "score_range": [0, None]}

__all__ = ["CodeStyleEvaluator", "FORMATTERS", "Formatter"]

MAX_DIFF_CHARS = 20000


class CodeStyleEvaluator(BaseEvaluator):
    """Formatted or not (0/1) and the size of the formatter's diff (lower is better).

    Args:
        language: ``python`` (ruff format), ``go`` (gofmt), ``javascript``/``typescript``
            (prettier), ``cpp`` (clang-format, LLVM style), ``java`` (google-java-format);
            ``example.inputs["language"]`` wins.
        output_key: where the code is in ``run.outputs`` (as for CodeCorrectnessEvaluator).
        timeout: seconds the formatter may take on one file (past it, the code scores 0).
        honour_suppressions: let the code's formatter-off comments (``# fmt: off``,
            ``// clang-format off``, ``// prettier-ignore``) count; by default they are
            plain comments and the code between them is formatted like the rest.
    """

    option_names = ("language", "output_key", "timeout", OPTION)
    direction = "higher"
    score_range = (0.0, 1.0)

    def __init__(self, name: str = "CodeStyleEvaluator", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.language = _language_name(str(kwargs.get("language", "python")))
        self.output_key: str | None = kwargs.get("output_key")
        self.timeout = float(kwargs.get("timeout", TOOL_TIMEOUT))
        self.honour = honoured(kwargs)

    def _evaluate(self, run: Run, example: Example | None = None) -> Any:
        language = _language_name(str(inputs_of(example).get("language") or self.language))
        formatter = _formatter(language)
        try:
            code = code_from_run(run, self.output_key, _fences_of(language))
        except CaseError as exc:
            return EvaluationResult(key=self.name, score=0.0, feedback=exc.feedback, comment=str(exc))
        argv = formatter.command(language)
        refused = oversized(code)
        if refused:
            return refused_result(self.name, refused)
        code, defused = (code, 0) if self.honour else defuse_format_switches(language, code)
        done = run_tool(argv, code, limit_memory=formatter.limit_memory, timeout=self.timeout)
        if done.returncode != 0 or (not done.stdout and code.strip()):
            return self._unparsable(language, done)
        results = self._compare(language, formatter.tool, code, done.stdout)
        results.results[0].metadata.update(suppressions=mode(self.honour), defused_switches=defused)
        return results

    def _compare(self, language: str, tool: str, code: str, formatted: str) -> EvaluationResults:
        diff = list(
            difflib.unified_diff(code.splitlines(), formatted.splitlines(), "code", "formatted", lineterm="")
        )
        changed = sum(1 for line in diff[2:] if line[:1] in "+-")
        text = "\n".join(diff)
        clean = changed == 0
        return EvaluationResults(
            results=[
                EvaluationResult(
                    key=self.name,
                    score=1.0 if clean else 0.0,
                    feedback=f"Formatted as {tool} formats it."
                    if clean
                    else f"Not formatted: {tool} changes {changed} line(s).",
                    metadata={
                        "language": language,
                        "formatter": tool,
                        "diff": text[:MAX_DIFF_CHARS],
                        "diff_truncated": len(text) > MAX_DIFF_CHARS,
                    },
                ),
                EvaluationResult(
                    key=f"{self.name}_diff_lines", score=changed, evaluator_info=dict(LOWER_IS_BETTER)
                ),
            ]
        )

    def _unparsable(self, language: str, done: ToolRun) -> EvaluationResult:
        """Score 0; no diff size, which means nothing for code that does not parse."""
        message = (done.stderr or done.stdout).strip()[:2000] or f"exit status {done.returncode}"
        stopped = done.returncode < 0  # a signal: the CPU limit, or the timeout's kill
        return EvaluationResult(
            key=self.name,
            score=0.0,
            feedback="The formatter was stopped by its limits."
            if stopped
            else "The formatter could not read the code.",
            comment=message,
            metadata={"language": language, "formatter_error": message},
        )


def _language_name(name: str) -> str:
    lowered = name.lower()
    return ALIASES.get(lowered, lowered)


def _formatter(language: str) -> Formatter:
    entry = FORMATTERS.get(language)
    if entry is None:
        raise ToolMissingError(
            f"no formatter is known for {language!r}; known: {', '.join(sorted(FORMATTERS))}"
        )
    return entry


def _fences_of(language: str) -> Any:
    try:
        return get_language(language)
    except UnknownLanguageError:  # a language the sandbox does not run: fences tagged by its name
        return _FenceTags(tuple({language, *(a for a, n in ALIASES.items() if n == language)}))


@dataclass(frozen=True)
class _FenceTags:
    fence_tags: tuple[str, ...]
