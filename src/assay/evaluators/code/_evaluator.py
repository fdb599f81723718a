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

from collections.abc import Callable
from typing import Any, TypeVar

from assay.errors import (
    CaseError,
    SandboxError,
    SandboxStartError,
    SandboxUnavailableError,
    UnknownLanguageError,
)
from assay.evaluation import BaseEvaluator, EvaluationResult
from assay.evaluators.code._calibrate import (
    Calibrated,
    ReferenceJob,
    measure_reference,
    reference_code_of,
    timeout_mode,
)
from assay.evaluators.code._cases import (
    TestCase,
    TestProgram,
    code_from_run,
    generated_cases_of,
    inputs_of,
    test_cases_of,
    test_program_of,
)
from assay.evaluators.code._passk import pass_at_k, pass_at_k_estimate
from assay.evaluators.code._plan import TimingPlan, function_cpu_ms, program_cpu_ms
from assay.evaluators.code._report import (
    failure,
    from_function_run,
    from_program_run,
    verdict_reducer,
)
from assay.sandbox import FunctionRun, Language, Limits, ProgramRun, SandboxConfig, get_language, get_pool
from assay.sandbox.equality import DEFAULT_TOLERANCE, Tolerance
from assay.schemas import Example, Run
from assay.store.current import current_store

T = TypeVar("T")
CASE_SOURCES = ("given", "given+generated")

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
        float_tolerance: the relative tolerance when a float is compared
            (``math.isclose`` ``rel_tol``, default 1e-9).
        abs_tolerance: the absolute tolerance (``abs_tol``, default 0).
        zero_tolerance: the absolute tolerance when one side is exactly 0 (default 1e-12).
            A test case can set its own ``rel_tol``, ``abs_tol`` and ``zero_tol``.
        time_limit: ``"fixed"`` (default: ``execution_timeout`` for the whole run),
            ``"calibrated"`` or ``Calibrated(factor=k, floor=s)``: each test may take k x the
            reference solution's measured time + s seconds (see ``_calibrate``).
        reference_key: where the reference solution is (default: ``reference_code``,
            ``canonical_solution`` or ``reference_solution`` in the example's outputs, then
            inputs); needed by a calibrated timeout and by ``speed_repeats``.
        speed_repeats: when positive, code that passes every test is run this many times
            and a second metric, ``<name>_relative_time`` (lower is better), gives its CPU
            time over the reference's: median and spread.
        cases: ``"given"`` (default) or ``"given+generated"``: also run the cases
            ``generate_test_cases`` stored in ``example.inputs["generated_test_cases"]``.

    Anything the candidate's code causes (no output, no tests, no such function, a
    syntax error, a timeout, a crash, a value too big, too deep or too odd to decode,
    compare or store, a sandbox that dies under it on both tries) scores as a failure
    with a message. Only a fault the code cannot cause (no sandbox can run here, none
    meets ``sandbox.min_level``, a sandbox or a process could not start) is an error,
    after one retry, and is left out of means.
    """

    option_names = (
        "execution_timeout",
        "func_name",
        "language",
        "output_key",
        "sandbox",
        "limits",
        "float_tolerance",
        "abs_tolerance",
        "zero_tolerance",
        "time_limit",
        "reference_key",
        "speed_repeats",
        "cases",
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
        self.tolerance = Tolerance(
            rel_tol=self.float_tolerance,
            abs_tol=float(kwargs.get("abs_tolerance", 0.0)),
            zero_tol=float(kwargs.get("zero_tolerance", Tolerance.zero_tol)),
        )
        if self.execution_timeout <= 0:
            raise ValueError(f"execution_timeout must be positive, got {self.execution_timeout}")
        get_language(self.language)  # an unknown default language is a setup error
        self.calibration = timeout_mode(kwargs.get("time_limit"))
        self.reference_key: str | None = kwargs.get("reference_key")
        self.speed_repeats = int(kwargs.get("speed_repeats", 0))
        if self.speed_repeats < 0:
            raise ValueError(f"speed_repeats must be 0 (off) or a positive count, got {self.speed_repeats}")
        self.case_source = str(kwargs.get("cases", "given"))
        if self.case_source not in CASE_SOURCES:
            raise ValueError(f"cases must be one of {', '.join(CASE_SOURCES)}, got {self.case_source!r}")

    def _evaluate(self, run: Run, example: Example | None = None) -> Any:
        inputs = inputs_of(example)
        try:
            language = get_language(str(inputs.get("language") or self.language))
        except UnknownLanguageError as exc:
            return failure(self.name, str(exc), "Unsupported language.")
        try:
            code = code_from_run(run, self.output_key, language)
            program = test_program_of(example)
            cases = None if program is not None else self._cases(example)
        except CaseError as exc:
            return failure(self.name, str(exc), exc.feedback)
        missing = language.runtime_missing(get_pool(self.sandbox_config).runtime)
        if missing:
            return failure(self.name, missing, "Language runtime missing.")
        extra = {"language": language.name, "mode": "test_program" if program else "test_cases"}
        func_name = str(inputs.get("func_name") or self.expected_func_name)
        timing = self._timing(example, language, func_name, cases, program)
        try:
            if program is not None:
                return timing.finish(self._test_program(language, code, program, extra, timing))
            assert cases is not None
            return timing.finish(self._test_cases(language, code, cases, func_name, extra, timing))
        except (SandboxStartError, SandboxUnavailableError):
            raise  # not the candidate's doing: an error (BaseEvaluator records it)
        except SandboxError as exc:  # it died under this code twice: the code's doing
            message = f"the sandbox died twice while running this code: {_describe_error(exc)}"
            return failure(self.name, message, "The code's sandbox died.", **extra)
        except Exception as exc:  # noqa: BLE001 - only the candidate's data got us here
            message = (
                f"the candidate's result could not be processed: {type(exc).__name__}: {_describe_error(exc)}"
            )
            return failure(self.name, message, "The code's result was refused.", **extra)

    def _cases(self, example: Example | None) -> list[TestCase]:
        if self.case_source == "given":
            return test_cases_of(example, self.tolerance)
        try:
            given = test_cases_of(example, self.tolerance)
        except CaseError:
            if not generated_cases_of(example, self.tolerance):
                raise  # neither given nor generated: the usual message
            given = []  # generated cases only
        return given + generated_cases_of(example, self.tolerance, start=len(given))

    def _timing(
        self,
        example: Example | None,
        language: Language,
        func_name: str,
        cases: list[TestCase] | None,
        program: TestProgram | None,
    ) -> TimingPlan:
        """The time limits and the reference's measured time (an error if calibration
        cannot be done: a dataset without a reference, or whose reference fails)."""
        if self.calibration is None and not self.speed_repeats:
            return TimingPlan(self.execution_timeout)
        reference_job = ReferenceJob(
            language,
            reference_code_of(example, self.reference_key),
            func_name,
            cases,
            program,
            self.tolerance,
            self.execution_timeout,
            self.limits,
        )
        calibration = self.calibration or Calibrated(repeats=self.speed_repeats)
        store = current_store() if calibration.cache else None
        pool = get_pool(self.sandbox_config)
        reference = _retry_once(lambda: measure_reference(pool, reference_job, calibration.repeats, store))
        return TimingPlan(
            self.execution_timeout,
            self.calibration,
            reference,
            self.speed_repeats,
            f"{self.name}_relative_time",
        )

    def _test_program(
        self, language: Language, code: str, program: Any, extra: dict[str, Any], timing: TimingPlan
    ) -> EvaluationResult:
        pool = get_pool(self.sandbox_config)
        source = language.program(program.prompt, code, program.entry_point)

        def once() -> ProgramRun:
            return pool.run_test_program(
                language,
                source,
                program.test,
                program.entry_point,
                timing.program_timeout(),
                self.limits,
                prompt=program.prompt,
            )

        program_run = _retry_once(once)
        result = from_program_run(self.name, program_run, extra)
        timing.repeat_if_passed(result, lambda: program_cpu_ms(_retry_once(once)))
        return result

    def _test_cases(
        self,
        language: Language,
        code: str,
        cases: list[TestCase],
        func_name: str,
        extra: dict[str, Any],
        timing: TimingPlan,
    ) -> EvaluationResult:
        pool = get_pool(self.sandbox_config)
        call_timeouts = timing.call_timeouts(len(cases))

        def once() -> FunctionRun:
            return pool.run_function(
                language,
                code,
                func_name,
                [c.call for c in cases],
                timing.run_timeout(call_timeouts),
                self.limits,
                on_outcome=verdict_reducer(cases, self.tolerance),
                call_timeouts=call_timeouts,
            )

        function_run = _retry_once(once)
        result = from_function_run(self.name, cases, function_run, self.tolerance, extra)
        timing.repeat_if_passed(result, lambda: function_cpu_ms(_retry_once(once)))
        return result

    def evaluate(self, run: Run, example: Example | None = None) -> Any:
        result = super().evaluate(run, example)
        if isinstance(result, EvaluationResult) and result.error is not None:
            result.metadata.setdefault("sandbox", _describe_quietly(self.sandbox_config))
        return result

    evaluate_run = evaluate


def _retry_once(job: Callable[[], T]) -> T:
    """A sandbox that could not start or died is retried once with a fresh one."""
    try:
        return job()
    except SandboxError:
        return job()


def _describe_error(exc: BaseException) -> str:
    try:
        return str(exc)[:500]
    except Exception:  # noqa: BLE001
        return "(no message)"


def _describe_quietly(config: SandboxConfig) -> dict[str, Any] | None:
    try:
        return get_pool(config).describe()
    except SandboxError as exc:
        return {"unavailable": str(exc)}
