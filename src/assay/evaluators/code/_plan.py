"""One example's time limits and speed measurement: fixed, or calibrated on the reference."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from assay.evaluation import EvaluationResult, EvaluationResults
from assay.evaluators.code._calibrate import Calibrated, ReferenceTime
from assay.evaluators.code._timing import relative_time_result
from assay.sandbox import FunctionRun, ProgramRun

__all__ = ["TimingPlan", "function_cpu_ms", "program_cpu_ms"]


@dataclass
class TimingPlan:
    """``fixed``: the whole run has ``execution_timeout``. Calibrated: each test has
    ``factor x reference + floor``, and the whole run their sum plus ``factor x`` the
    reference's time outside its calls (starting the process, loading or compiling the
    code) plus one more floor. ``speed_repeats``: extra runs of passing code for the
    relative time."""

    execution_timeout: float
    calibration: Calibrated | None = None
    reference: ReferenceTime | None = None
    speed_repeats: int = 0
    speed_key: str = ""
    candidate_cpu_ms: list[float] = field(default_factory=list)

    def call_timeouts(self, count: int) -> list[float] | None:
        if self.calibration is None or self.reference is None:
            return None
        limits = [self.calibration.limit(ms) for ms in self.reference.per_test_ms]
        if len(limits) != count:  # the reference ran other cases: cannot happen, but never misapply
            raise ValueError(f"the reference was timed on {len(limits)} cases, not {count}")
        return limits

    def run_timeout(self, call_timeouts: list[float] | None) -> float:
        if call_timeouts is None or self.calibration is None or self.reference is None:
            return self.execution_timeout
        return sum(call_timeouts) + self.calibration.limit(self.reference.load_ms)

    def program_timeout(self) -> float:
        if self.calibration is None or self.reference is None:
            return self.execution_timeout
        return self.calibration.limit(self.reference.total_ms)

    def repeat_if_passed(self, result: EvaluationResult, run_once: Callable[[], float | None]) -> None:
        """Measure passing code ``speed_repeats`` times in all (the first run counts)."""
        if not self.speed_repeats or result.score != 1:
            return
        first = result.metadata.get("execution_time") or {}
        measured = [float(first.get("cpu_ms") or 0.0)]
        for _ in range(self.speed_repeats - 1):
            cpu = run_once()
            if cpu is None:  # it failed or timed out this time: no speed figure
                return
            measured.append(cpu)
        self.candidate_cpu_ms = measured

    def finish(self, result: EvaluationResult) -> EvaluationResult | EvaluationResults:
        """The correctness result with the timing metadata, plus the relative time."""
        if self.calibration is not None and self.reference is not None:
            result.metadata["timeout_mode"] = {
                "mode": "calibrated",
                "factor": self.calibration.factor,
                "floor_s": self.calibration.floor,
            }
        if self.reference is not None:
            result.metadata["reference_time"] = self.reference.describe()
        if not self.candidate_cpu_ms or self.reference is None:
            return result
        speed = relative_time_result(self.speed_key, self.candidate_cpu_ms, self.reference.total_cpu_ms)
        return EvaluationResults(results=[result, speed])


def function_cpu_ms(run: FunctionRun) -> float | None:
    """The run's total CPU time if every call passed and reported one."""
    if run.load_failure is not None or any(not o.passed or o.cpu_ms is None for o in run.outcomes):
        return None
    return sum(o.cpu_ms or 0.0 for o in run.outcomes)


def program_cpu_ms(run: ProgramRun) -> float | None:
    spent: Any = run.verdict.get("time")
    if not run.passed or not isinstance(spent, dict):
        return None
    return float(spent.get("cpu_ms") or 0.0)
