"""The candidate's execution time, as measured inside the sandbox, and its speed relative
to the reference.

Every reply of a candidate's process carries ``time: {"wall_ms", "cpu_ms"}`` for the call
alone (not the queue, the sandbox's start, loading the code or moving the values), so
these figures are comparable across runs and languages. They are noisy: another process
on the same cores stretches wall time (CPU time much less), caches and frequency scaling
move both by tens of percent, and a call of a few microseconds is mostly clock overhead.
That is why the relative speed is a median over several runs, with its spread.

The figures come from the candidate's own process, so code that wants to can lie about
them; they are a metric, never a verdict (the timeouts are enforced from outside).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from assay.evaluation import EvaluationResult
from assay.sandbox import CallOutcome

LOWER_IS_BETTER = {"direction": "lower", "score_range": [0, None]}
#: CPU times under this many ms count as this many: below it a call's time is mostly its
#: runtime's own noise (a JVM's first-call linking, a page fault, a timer tick), and the
#: same 32-step Java function measured 80x apart from one run to the next
RESOLUTION_MS = 0.1

__all__ = ["example_time", "program_time", "relative_time_result"]


def example_time(outcomes: Sequence[CallOutcome]) -> dict[str, Any]:
    """Totals over the tests that reported a time (all of them, unless one crashed or
    timed out), and how many did."""
    timed = [o for o in outcomes if o.wall_ms is not None and o.cpu_ms is not None]
    return {
        "cpu_ms": round(sum(o.cpu_ms or 0.0 for o in timed), 3),
        "wall_ms": round(sum(o.wall_ms or 0.0 for o in timed), 3),
        "tests_timed": len(timed),
        "tests": len(outcomes),
    }


def program_time(verdict: dict[str, Any]) -> dict[str, Any] | None:
    """A test program's candidate time: the checker sums the replies of every call."""
    spent = verdict.get("time")
    if not isinstance(spent, dict):
        return None
    return {
        "cpu_ms": round(float(spent.get("cpu_ms") or 0.0), 3),
        "wall_ms": round(float(spent.get("wall_ms") or 0.0), 3),
        "calls": verdict.get("calls"),
    }


def relative_time_result(
    key: str, candidate_cpu_ms: Sequence[float], reference_cpu_ms: Sequence[float]
) -> EvaluationResult:
    """Candidate CPU time / reference CPU time, median over the runs of each, with the
    spread (the lowest and highest ratio the runs allow). Lower is better; 1 is as fast as
    the reference. CPU time rather than wall time: on a shared machine it moves much less.
    Times under ``RESOLUTION_MS`` compare as equal."""
    candidate, reference = statistics.median(candidate_cpu_ms), statistics.median(reference_cpu_ms)
    floor = RESOLUTION_MS
    ratio = max(candidate, floor) / max(reference, floor)
    low = max(min(candidate_cpu_ms), floor) / max(max(reference_cpu_ms), floor)
    high = max(max(candidate_cpu_ms), floor) / max(min(reference_cpu_ms), floor)
    return EvaluationResult(
        key=key,
        score=round(ratio, 4),
        evaluator_info=dict(LOWER_IS_BETTER),
        comment=(
            f"CPU time {candidate:.3f} ms vs the reference's {reference:.3f} ms (median of "
            f"{len(candidate_cpu_ms)} and {len(reference_cpu_ms)} runs): {ratio:.2f}x, spread {low:.2f}x-{high:.2f}x"
        ),
        metadata={
            "candidate_cpu_ms": [round(v, 3) for v in candidate_cpu_ms],
            "reference_cpu_ms": [round(v, 3) for v in reference_cpu_ms],
            "ratio_low": round(low, 4),
            "ratio_high": round(high, 4),
            "runs": len(candidate_cpu_ms),
            "resolution_ms": RESOLUTION_MS,
        },
    )
