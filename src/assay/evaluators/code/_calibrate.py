"""Timeouts calibrated on the reference solution's own runtime, EvalPlus style.

Each test's limit is ``factor x reference + floor``: the reference is run in the same
sandbox, on the same inputs, ``repeats`` times, and the median of each test's time is
kept. What a machine can do varies (a busy laptop, a shared CI runner); a limit relative
to the reference follows it, where a fixed one either fails correct code when the machine
is slow or lets an exponential answer finish when it is fast.

A test's time is the reference's CPU time for the call, as the kernel counts it for its
sandbox (which has the same CPU share as a candidate's): a CPU hog beside the measurement
stretches wall time several-fold, CPU time hardly. A test program's time is its test phase
(from the go-ahead, compiling excluded). Runs whose times spread more than
``MAX_SPREAD``-fold (and by more than ``NOISE_MS``) say the machine was contended: they
are measured once more, and refused (``CalibrationError``, nothing cached) if they spread
again.

A measurement is cached in the store (namespace ``code.reference_time.v2``), keyed on the
language, the reference code and the inputs (or test program), so a dataset is measured
once, not at every row or experiment.
"""

from __future__ import annotations

import hashlib
import logging
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import orjson

from assay.errors import CalibrationError
from assay.evaluators.code._cases import TestCase, TestProgram
from assay.evaluators.code._report import verdict_reducer
from assay.sandbox import Language, Limits, SandboxPool
from assay.sandbox.equality import Tolerance
from assay.sandbox.harness import codec

__all__ = ["Calibrated", "CalibrationError", "ReferenceTime", "measure_reference", "reference_code_of"]

NAMESPACE = "code.reference_time.v2"  # v1 held parent wall times
MAX_SPREAD = 2.5  # slowest run / fastest run past which the machine was busy
NOISE_MS = 20.0  # differences below this are the clocks' and caches', not contention
REFERENCE_KEYS = ("reference_code", "canonical_solution", "reference_solution")
log = logging.getLogger("assay.evaluators.code.calibrate")


@dataclass(frozen=True)
class Calibrated:
    """``time_limit=Calibrated(factor=4, floor=1)``: each test may take ``factor`` times the
    reference's median time plus ``floor`` seconds (EvalPlus uses a factor of 4 and a
    floor of 1 s). ``repeats``: how many runs of the reference the median is taken over.
    ``cache``: keep the measurement in the store (a re-run does not measure again)."""

    factor: float = 4.0
    floor: float = 1.0
    repeats: int = 3
    cache: bool = True

    def __post_init__(self) -> None:
        if not self.factor >= 1:
            raise ValueError(f"Calibrated(factor=...) must be at least 1, got {self.factor!r}")
        if not self.floor > 0:
            raise ValueError(f"Calibrated(floor=...) must be positive seconds, got {self.floor!r}")
        if not isinstance(self.repeats, int) or self.repeats < 1:
            raise ValueError(f"Calibrated(repeats=...) must be a positive integer, got {self.repeats!r}")

    def limit(self, reference_ms: float) -> float:
        """Seconds one test (or one test program) may take."""
        return self.factor * reference_ms / 1000 + self.floor


def timeout_mode(value: Any) -> Calibrated | None:
    """The evaluator's ``time_limit`` option: None (a fixed ``execution_timeout``),
    ``"calibrated"`` (the defaults) or a ``Calibrated``."""
    if value is None or value == "fixed":
        return None
    if value == "calibrated":
        return Calibrated()
    if isinstance(value, Calibrated):
        return value
    raise ValueError(
        f"time_limit must be 'fixed', 'calibrated' or Calibrated(factor=..., floor=...), got {value!r}"
        " (a number of seconds is execution_timeout)"
    )


@dataclass(frozen=True)
class ReferenceTime:
    """Medians over ``repeats`` runs of the reference: per test (test-case mode) or for
    the whole test program. ``per_test_ms``: each call's CPU time (the kernel's count where
    the sandbox has a cgroup; else the reference's own, or the parent's time from sending a
    call to its reply when neither is there); ``total_ms``: a test program's test phase
    (wall time, compiling excluded); ``cpu_ms``/``wall_ms``: per call, as the outcomes
    carry them."""

    per_test_ms: list[float]
    cpu_ms: list[float]
    wall_ms: list[float]
    total_ms: float
    total_cpu_ms: list[float]  # one per repeat: the spread for relative speed
    repeats: int
    cached: bool = False
    load_ms: float = 0.0  # the run less its calls: starting, loading (compiling) the code

    def describe(self) -> dict[str, Any]:
        return {
            "per_test_ms": [round(v, 3) for v in self.per_test_ms],
            "cpu_ms": [round(v, 3) for v in self.cpu_ms],
            "wall_ms": [round(v, 3) for v in self.wall_ms],
            "total_ms": round(self.total_ms, 3),
            "load_ms": round(self.load_ms, 3),
            "repeats": self.repeats,
            "cached": self.cached,
        }


def reference_code_of(example: Any, key: str | None) -> str:
    """The reference solution: ``example.outputs[key]`` (by default the first of
    ``reference_code``, ``canonical_solution``, ``reference_solution``), else the same key
    in ``example.inputs`` (HumanEval keeps ``canonical_solution`` beside the prompt)."""
    keys = (key,) if key else REFERENCE_KEYS
    for source in (getattr(example, "outputs", None), getattr(example, "inputs", None)):
        for name in keys:
            value = (source or {}).get(name)
            if isinstance(value, str) and value.strip():
                return value
    raise CalibrationError(
        f"a calibrated timeout needs the reference solution: no non-empty string at "
        f"{' or '.join(repr(k) for k in keys)} in example.outputs or example.inputs"
    )


@dataclass(frozen=True)
class ReferenceJob:
    """What to run the reference on: test cases or a test program."""

    language: Language
    code: str
    func_name: str
    cases: Sequence[TestCase] | None
    program: TestProgram | None
    tolerance: Tolerance
    budget: float  # seconds for one run of the reference
    limits: Limits

    def key(self, repeats: int) -> str:
        material = {
            "language": self.language.name,
            "code": self.code,
            "func_name": self.func_name,
            "calls": [codec.encode([list(c.call.args), c.call.kwargs]) for c in self.cases or ()],
            "program": asdict(self.program) if self.program else None,
            "repeats": repeats,
        }
        return hashlib.sha256(orjson.dumps(material, option=orjson.OPT_SORT_KEYS)).hexdigest()


def measure_reference(pool: SandboxPool, job: ReferenceJob, repeats: int, store: Any | None) -> ReferenceTime:
    """The reference's times, from the cache or measured now (``repeats`` runs)."""
    key = job.key(repeats)
    cached = _cache_get(store, key)
    if cached is not None:
        return cached
    runs = [_run_once(pool, job) for _ in range(repeats)]
    if contended(runs):
        runs = [_run_once(pool, job) for _ in range(repeats)]
        why = contended(runs)
        if why:
            raise CalibrationError(
                f"the reference's times were not steady twice in a row ({why}): the machine was "
                "too busy to calibrate on; nothing was cached, run it again when it is quieter"
            )
    measured = ReferenceTime(
        per_test_ms=_medians([r[0] for r in runs]),
        cpu_ms=_medians([r[1] for r in runs]),
        wall_ms=_medians([r[2] for r in runs]),
        total_ms=statistics.median(sum(r[0]) for r in runs),
        total_cpu_ms=[sum(r[1]) for r in runs],
        repeats=repeats,
        load_ms=statistics.median(r[3] for r in runs),
    )
    _cache_put(store, key, measured)
    return measured


# per test: the limit's basis (CPU ms), cpu ms, wall ms; then the run's time outside its calls
Times = tuple[list[float], list[float], list[float], float]


def contended(runs: Sequence[Times]) -> str | None:
    """Why the runs' totals say the machine was contended, or None (steady enough)."""
    totals = [sum(run[0]) for run in runs]
    if len(totals) < 2:
        return None
    low, high = min(totals), max(totals)
    if high - low <= NOISE_MS or high <= MAX_SPREAD * low:
        return None
    return f"{len(totals)} runs took {low:.1f}-{high:.1f} ms, more than {MAX_SPREAD:g}x apart"


def _run_once(pool: SandboxPool, job: ReferenceJob) -> Times:
    if job.program is not None:
        source = job.language.program(job.program.prompt, job.code, job.program.entry_point)
        run = pool.run_test_program(
            job.language,
            source,
            job.program.test,
            job.program.entry_point,
            job.budget,
            job.limits,
            prompt=job.program.prompt,
        )
        if not run.passed:
            raise CalibrationError(
                f"the reference solution fails its own test program: {run.verdict.get('message') or run.verdict}"
            )
        spent = run.verdict.get("time") or {}
        test_phase = run.duration_ms - (run.compile_ms or 0.0)
        return [test_phase], [float(spent.get("cpu_ms", 0.0))], [float(spent.get("wall_ms", 0.0))], 0.0
    assert job.cases is not None
    function_run = pool.run_function(
        job.language,
        job.code,
        job.func_name,
        [c.call for c in job.cases],
        job.budget,
        job.limits,
        on_outcome=verdict_reducer(job.cases, job.tolerance),
    )
    if function_run.load_failure is not None:
        raise CalibrationError(f"the reference solution does not load: {function_run.load_failure.message}")
    failed = [o.index for o in function_run.outcomes if not o.passed]
    if failed:
        raise CalibrationError(
            f"the reference solution fails its own test case(s) #{', #'.join(map(str, failed[:10]))}"
        )
    outcomes = function_run.outcomes
    calls_ms = [o.duration_ms or 0.0 for o in outcomes]
    return (
        [o.duration_ms or 0.0 if o.cpu_ms is None else o.cpu_ms for o in outcomes],
        [o.cpu_ms or 0.0 for o in outcomes],
        [o.wall_ms or 0.0 for o in outcomes],
        max(0.0, function_run.duration_ms - sum(calls_ms)),
    )


def _medians(runs: list[list[float]]) -> list[float]:
    return [statistics.median(values) for values in zip(*runs)]


def _cache_get(store: Any | None, key: str) -> ReferenceTime | None:
    if store is None:
        return None
    try:
        raw = store.cache_get(NAMESPACE, key)
        if raw is None:
            return None
        return ReferenceTime(**{**orjson.loads(raw), "cached": True})
    except Exception as exc:  # noqa: BLE001 - an unreadable cache costs a measurement, no more
        log.warning("could not read the reference-time cache: %s", exc)
        return None


def _cache_put(store: Any | None, key: str, measured: ReferenceTime) -> None:
    if store is None:
        return
    try:
        store.cache_put(NAMESPACE, key, orjson.dumps({**asdict(measured), "cached": False}))
    except Exception as exc:  # noqa: BLE001 - a cache that cannot write costs a measurement next time
        log.warning("could not write the reference-time cache: %s", exc)
