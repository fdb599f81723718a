"""Code correctness: run generated code against tests in an OS-level sandbox.

``CodeCorrectnessEvaluator`` has two modes, picked per example:

- test cases: ``example.inputs["test_cases"]`` (or ``example.outputs["expected_test_cases"]``),
  each ``{"input": x, "expected_output": y}`` or ``{"args": [...], "kwargs": {...},
  "expected_output": y}``. Only the inputs enter the sandbox; each return value comes
  back as plain data and is compared with the expected output here, type-strictly.
- test program (HumanEval/MBPP): ``example.inputs`` carries ``prompt``, ``test`` (defining
  ``check(candidate)``) and ``entry_point``. The test program runs in its own sandbox;
  each ``candidate(...)`` call crosses to the candidate's sandbox as plain data.

``pass_at_k(k)`` is the matching summary evaluator (Chen et al., 2021).
"""

from __future__ import annotations

from typing import Any

from assay.evaluation import BaseEvaluator, EvaluationResult
from assay.evaluators.code._cases import (
    CaseError,
    code_from_run,
    inputs_of,
    test_cases_of,
    test_program_of,
)
from assay.evaluators.code._passk import pass_at_k, pass_at_k_estimate
from assay.evaluators.code._report import failure, from_function_run, from_program_run
from assay.sandbox import (
    Limits,
    SandboxConfig,
    SandboxError,
    UnknownLanguage,
    get_language,
    get_pool,
)
from assay.sandbox.compare import DEFAULT_TOLERANCE
from assay.schemas import Example, Run

__all__ = ["CodeCorrectnessEvaluator", "pass_at_k", "pass_at_k_estimate"]


class CodeCorrectnessEvaluator(BaseEvaluator):
    """Score = tests passed / tests run (test cases), or 1/0 (test program).

    Args:
        name: the result key.
        execution_timeout: wall-clock seconds for the whole run of one candidate.
        func_name: the function to call in test-case mode (``example.inputs["func_name"]``
            overrides it).
        language: ``"python"`` or ``"javascript"``; ``example.inputs["language"]`` wins.
        output_key: where the code is in ``run.outputs``; by default ``"text"`` (where
            LangChain-style code generators put it), else ``"output"``, else the only value. Chat messages give their
            content; markdown fences are stripped.
        sandbox: a ``SandboxConfig`` (backend, minimum level, workers...).
        limits: per-process ``Limits`` (CPU, memory, processes, file size, output).
        float_tolerance: relative and absolute tolerance when a float is compared.

    A failure of the code (no output, no tests, no such function, a syntax error, a
    timeout, a crash) scores 0 with a message. If no sandbox can run at all (or none
    meets ``sandbox.min_level``), the result is an error, not a 0.
    """

    option_names = (
        "execution_timeout", "func_name", "language", "output_key", "sandbox", "limits", "float_tolerance",
    )

    def __init__(self, name: str = "CodeCorrectnessEvaluator", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.execution_timeout = float(kwargs.get("execution_timeout", 10))
        self.expected_func_name = str(kwargs.get("func_name", "solution"))
        self.language = str(kwargs.get("language", "python"))
        self.output_key: str | None = kwargs.get("output_key")
        self.sandbox_config: SandboxConfig = kwargs.get("sandbox") or SandboxConfig()
        self.limits: Limits = kwargs.get("limits") or Limits()
        self.float_tolerance = float(kwargs.get("float_tolerance", DEFAULT_TOLERANCE))
        if self.execution_timeout <= 0:
            raise ValueError(f"execution_timeout must be positive, got {self.execution_timeout}")
        get_language(self.language)  # an unknown default language is a setup error

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        inputs = inputs_of(example)
        try:
            language = get_language(str(inputs.get("language") or self.language))
        except UnknownLanguage as exc:
            return failure(self.name, str(exc), "Unsupported language.")
        try:
            code = code_from_run(run, self.output_key, language)
            program = test_program_of(example)
            cases = None if program is not None else test_cases_of(example)
        except CaseError as exc:
            return failure(self.name, str(exc), exc.feedback)
        missing = language.runtime_missing(get_pool(self.sandbox_config).runtime)
        if missing:
            return failure(self.name, missing, "Language runtime missing.")
        extra = {"language": language.name, "mode": "test_program" if program else "test_cases"}
        pool = get_pool(self.sandbox_config)
        if program is not None:
            source = language.program(program.prompt, code, program.entry_point)
            program_run = pool.run_test_program(
                language, source, program.test, program.entry_point, self.execution_timeout,
                self.limits, prompt=program.prompt)
            return from_program_run(self.name, program_run, extra)
        assert cases is not None
        func_name = str(inputs.get("func_name") or self.expected_func_name)
        function_run = pool.run_function(
            language, code, func_name, [c.call for c in cases], self.execution_timeout,
            self.limits)
        return from_function_run(self.name, cases, function_run, self.float_tolerance, extra)

    def evaluate(self, run: Run, example: Example | None = None) -> Any:
        result = super().evaluate(run, example)
        if isinstance(result, EvaluationResult) and result.error is not None:
            result.metadata.setdefault("sandbox", _describe_quietly(self.sandbox_config))
        return result

    evaluate_run = evaluate


def _describe_quietly(config: SandboxConfig) -> dict[str, Any] | None:
    try:
        return get_pool(config).describe()
    except SandboxError as exc:
        return {"unavailable": str(exc)}
