"""``ProgramEvaluator``: a whole program on standard input and output, the format of
competitive-programming benchmarks, judged test by test in the sandbox."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from typing import Any, BinaryIO

from assay.errors import (
    CaseError,
    CheckerProgramError,
    SandboxError,
    SandboxStartError,
    SandboxUnavailableError,
    UnknownLanguageError,
)
from assay.evaluation import BaseEvaluator, EvaluationResult
from assay.evaluators.programs import _verdicts as v
from assay.evaluators.programs._checkers import BUILT_IN, CheckerSpec, Comparison
from assay.evaluators.programs._tests import StdioTest, read_tests
from assay.sandbox import Language, Limits, SandboxConfig, Spool, get_language, get_pool, strip_fences
from assay.sandbox.config import MIB
from assay.schemas import Example, Run

OUTPUT_KEYS = ("text", "output")


@dataclass(frozen=True)
class CheckerProgram:
    """A problem's own checker (its "special judge"), in any language the sandbox runs.

    It is run as ``checker input.txt output.txt answer.txt`` (the test's input, the
    candidate's output, the expected output) in a sandbox of its own, and answers with
    its exit code: 0 accepted, 1 wrong answer, 2 presentation error (counted as a wrong
    answer); anything else, a crash or a timeout is the checker's failure. What it
    writes to stderr (else stdout) is the test's message. testlib checkers work as
    they are."""

    language: str
    code: str


@dataclass
class _Setup:
    language: Language
    code: str
    tests: list[StdioTest]
    checker: CheckerSpec | CheckerProgram
    time_limit: float


class ProgramEvaluator(BaseEvaluator):
    """Score: 1 if every test is accepted, else 0; with ``stop_on_failure=False`` every
    test runs and the score is the fraction accepted.

    Args:
        name: the result key.
        language: the program's language (``example.inputs["language"]`` wins): python,
            javascript, cpp, go or java.
        time_limit: CPU seconds per test, by the kernel's count (``inputs["time_limit"]``
            wins). A program still running at twice that plus a second of wall-clock
            time (asleep, blocked) is stopped: a time limit too.
        memory_limit_mb: memory per test (Java: its heap; the JVM gets 256 MiB more).
        checker: ``"exact"``, ``"tokens"`` (default), ``"case_insensitive"``,
            ``"floats"`` or a ``CheckerProgram`` (``inputs["checker"]`` wins: a name, or
            ``{"language": ..., "code": ...}``).
        abs_tol, rel_tol: the ``floats`` checker's tolerances (a pair of numbers is
            equal when within either).
        stop_on_failure: stop at the first test not accepted (default True).
        output_limit_mb: output per test past which reading stops (output limit).
        output_key: where the code is in ``run.outputs`` (default ``text``, ``output``,
            or the only value); markdown fences are stripped.
        sandbox: a ``SandboxConfig``.

    Tests come from the example (see ``_tests``); the verdict kinds are accepted, wrong
    answer, time limit, memory limit, output limit, runtime error, compile error.
    """

    option_names = (
        "language",
        "time_limit",
        "memory_limit_mb",
        "checker",
        "abs_tol",
        "rel_tol",
        "stop_on_failure",
        "output_limit_mb",
        "output_key",
        "sandbox",
    )

    def __init__(self, name: str = "program", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.language = str(kwargs.get("language", "python"))
        get_language(self.language)
        self.time_limit = _positive(kwargs.get("time_limit", 2.0), "time_limit")
        self.memory_mb = int(_positive(kwargs.get("memory_limit_mb", 256), "memory_limit_mb"))
        self.output_limit = int(_positive(kwargs.get("output_limit_mb", 64), "output_limit_mb") * MIB)
        self.abs_tol = float(kwargs.get("abs_tol", 1e-6))
        self.rel_tol = float(kwargs.get("rel_tol", 1e-6))
        self.checker = self._checker(kwargs.get("checker", "tokens"))
        self.stop_on_failure = bool(kwargs.get("stop_on_failure", True))
        self.output_key: str | None = kwargs.get("output_key")
        self.sandbox_config: SandboxConfig = kwargs.get("sandbox") or SandboxConfig()

    def _checker(self, value: Any) -> CheckerSpec | CheckerProgram:
        if isinstance(value, CheckerProgram):
            get_language(value.language)
            return value
        if isinstance(value, dict) and "code" in value:
            return self._checker(CheckerProgram(str(value.get("language", "python")), str(value["code"])))
        if isinstance(value, str):
            return CheckerSpec(value, self.abs_tol, self.rel_tol)
        raise ValueError(f"checker must be one of {', '.join(BUILT_IN)} or a CheckerProgram, got {value!r}")

    # -- one example ---------------------------------------------------------------------
    def _evaluate(self, run: Run, example: Example | None = None) -> Any:
        inputs = dict(example.inputs) if example is not None and example.inputs else {}
        outputs = dict(example.outputs) if example is not None and example.outputs else {}
        try:
            setup = self._setup(run, inputs, outputs)
        except (CaseError, UnknownLanguageError) as exc:
            return _failure(self.name, str(exc), getattr(exc, "feedback", "Unsupported language."))
        missing = setup.language.runtime_missing(get_pool(self.sandbox_config).runtime)
        if missing:
            return _failure(self.name, missing, "Language runtime missing.")
        try:
            return self._judge(setup)
        except (SandboxStartError, SandboxUnavailableError, CheckerProgramError):
            raise
        except SandboxError:
            try:
                return self._judge(setup)  # a sandbox that died is retried once, fresh
            except (SandboxStartError, SandboxUnavailableError, CheckerProgramError):
                raise
            except SandboxError as exc:
                message = f"the sandbox died twice while running this program: {str(exc)[:500]}"
                return _failure(self.name, message, "The program's sandbox died.")

    def _setup(self, run: Run, inputs: dict[str, Any], outputs: dict[str, Any]) -> _Setup:
        language = get_language(str(inputs.get("language") or self.language))
        checker = self.checker if inputs.get("checker") is None else self._checker(inputs["checker"])
        limit = inputs.get("time_limit")
        time_limit = self.time_limit if limit is None else _positive(limit, "inputs['time_limit']")
        return _Setup(
            language, _code(run, self.output_key, language), read_tests(inputs, outputs), checker, time_limit
        )

    def _judge(self, setup: _Setup) -> EvaluationResult:
        pool = get_pool(self.sandbox_config)
        limits = Limits(memory_bytes=self.memory_mb * MIB, max_output_bytes=self.output_limit)
        program = setup.checker if isinstance(setup.checker, CheckerProgram) else None
        checker = (get_language(program.language), program.code) if program else None
        with pool.stdio(setup.language, setup.code, limits, checker) as judge:
            built = judge.build()
            if built.error is not None:
                return self._compile_error(setup, built.error)
            checker_error = judge.build_checker()
            if checker_error is not None:
                raise CheckerProgramError(f"the checker program does not build:\n{checker_error[:2000]}")
            records = self._run_tests(judge, setup)
        if records and records[0]["verdict"] == v.COMPILE_ERROR:
            return self._compile_error(setup, records[0]["message"])
        return self._result(setup, records, built.compile_ms, pool.describe())

    def _run_tests(self, judge: Any, setup: _Setup) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        for test in setup.tests:
            kind, message, ran = self._one_test(judge, setup, test)
            if not records and ran is not None and setup.language.name == "python":
                syntax = v.python_syntax_error(ran)
                if syntax is not None:
                    return [v.test_record(test.index, v.COMPILE_ERROR, syntax, None)]
            records.append(v.test_record(test.index, kind, message, ran))
            if kind != v.ACCEPTED and self.stop_on_failure:
                break
        for test in setup.tests[len(records) :]:
            records.append(v.test_record(test.index, v.NOT_RUN, "", None))
        return records

    def _one_test(self, judge: Any, setup: _Setup, test: StdioTest) -> tuple[str, str, Any]:
        if isinstance(setup.checker, CheckerSpec):
            with test.input.open() as stdin, test.output.open() as expected:
                comparison = Comparison(setup.checker, expected, self.output_limit)
                ran = judge.run(stdin, comparison, setup.time_limit)
                decided = v.run_verdict(ran, setup.time_limit, self.output_limit)
                if decided is not None:
                    return (*decided, ran)
                difference = comparison.verdict()
            return (v.WRONG_ANSWER, difference, ran) if difference else (v.ACCEPTED, "", ran)
        with tempfile.TemporaryFile() as spool:
            ran = self._spooled_run(judge, setup, test, spool)
            decided = v.run_verdict(ran, setup.time_limit, self.output_limit)
            if decided is not None:
                return (*decided, ran)
            spool.seek(0)
            with test.input.open() as input_, test.output.open() as answer:
                return (*v.checker_verdict(judge.check(input_, spool, answer)), ran)

    def _spooled_run(self, judge: Any, setup: _Setup, test: StdioTest, spool: BinaryIO) -> Any:
        with test.input.open() as stdin:
            return judge.run(stdin, Spool(spool, self.output_limit), setup.time_limit)

    # -- results --------------------------------------------------------------------------
    def _compile_error(self, setup: _Setup, message: str) -> EvaluationResult:
        records = [v.test_record(t.index, v.NOT_RUN, "", None) for t in setup.tests]
        return EvaluationResult(
            key=self.name,
            score=0.0,
            feedback=v.LABELS[v.COMPILE_ERROR],
            comment=f"compile error:\n{message}",
            metadata={**self._common(setup), "verdict": v.COMPILE_ERROR, "passed": 0, "tests": records},
        )

    def _result(
        self, setup: _Setup, records: list[dict[str, Any]], compile_ms: float | None, sandbox: dict[str, Any]
    ) -> EvaluationResult:
        passed = sum(r["verdict"] == v.ACCEPTED for r in records)
        first = next((r for r in records if r["verdict"] != v.ACCEPTED), None)
        verdict = v.ACCEPTED if first is None else first["verdict"]
        if first is None:
            comment = f"accepted: {passed}/{len(records)} tests"
        else:
            comment = f"{v.LABELS[verdict]} on test {first['test']}: {first.get('message', '')}".rstrip(": ")
        score = passed / len(records) if not self.stop_on_failure else float(first is None)
        return EvaluationResult(
            key=self.name,
            score=score,
            feedback=v.LABELS[verdict],
            comment=comment,
            metadata={
                **self._common(setup),
                "verdict": verdict,
                "passed": passed,
                "compile_ms": compile_ms,
                "tests": records,
                "sandbox": sandbox,
            },
        )

    def _common(self, setup: _Setup) -> dict[str, Any]:
        checker = setup.checker.name if isinstance(setup.checker, CheckerSpec) else "program"
        return {
            "language": setup.language.name,
            "total": len(setup.tests),
            "checker": checker,
            "time_limit_ms": setup.time_limit * 1000,
            "memory_limit_mb": self.memory_mb,
        }


def _positive(value: Any, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not number > 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return number


def _code(run: Run, output_key: str | None, language: Language) -> str:
    outputs = run.outputs or {}
    key = output_key or next(
        (k for k in OUTPUT_KEYS if k in outputs), next(iter(outputs)) if len(outputs) == 1 else "text"
    )
    value = outputs.get(key)
    if isinstance(value, list) and value:
        value = value[-1]
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        value = value["content"]
    if not isinstance(value, str) or not value.strip():
        raise CaseError(f"the run's output {key!r} holds no program", "No code generated.")
    return strip_fences(value, language)


def _failure(key: str, message: str, feedback: str) -> EvaluationResult:
    return EvaluationResult(
        key=key, score=0.0, feedback=feedback, comment=message, metadata={"verdict": None, "error": message}
    )
