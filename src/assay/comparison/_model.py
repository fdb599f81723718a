"""What ``assay.compare`` returns: typed, printable, JSON-able."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from assay._metric import Direction, Range
from assay.comparison.verbosity import VerbosityCheck
from assay.stats.intervals import Interval

Verdict = Literal["better", "worse", "no detectable difference", "not enough pairs"]
Kind = Literal["binary", "continuous"]


@dataclass(frozen=True)
class SideSummary:
    """One compared experiment."""

    id: str
    name: str
    status: str
    rows: int
    target_failures: int
    dataset_version: int | None


@dataclass(frozen=True)
class MetricComparison:
    """B against A on one metric, over the examples scored on both sides.

    ``mean_a``/``mean_b`` are over those paired examples (repetitions averaged per
    example first), so ``difference == mean_b - mean_a``. ``p_holm`` is the p-value after
    Holm's correction across all compared metrics; the verdict uses it at alpha 0.05.
    ``mde`` is the smallest true difference this comparison would detect with 80% power
    at alpha 0.05 (for one metric alone). ``only_a``/``only_b`` count examples scored on
    one side only (the other's target failed, its evaluator errored or it has no row).
    ``rows_worse``/``rows_better`` count the rows (example, repetition) where B scored worse
    or better than A, read with the direction, an evaluator error where A had a score
    counting as worse (the UI's per-row changes); None with repetitions.
    """

    key: str
    direction: Direction
    score_range: Range | None
    kind: Kind
    n_paired: int
    only_a: int
    only_b: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    interval: Interval | None
    p_value: float | None
    p_holm: float | None
    test: str | None
    mde: float | None
    verdict: Verdict
    errors_a: int = 0
    errors_b: int = 0
    skipped_a: int = 0
    skipped_b: int = 0
    rows_worse: int | None = None
    rows_better: int | None = None

    @property
    def ci95(self) -> tuple[float, float] | None:
        return None if self.interval is None else (self.interval.low, self.interval.high)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["score_range"] = list(self.score_range) if self.score_range is not None else None
        data["interval"] = None
        data["ci95"] = list(self.ci95) if self.ci95 is not None else None
        data["ci_method"] = self.interval.method if self.interval is not None else None
        del data["interval"]
        return data


@dataclass(frozen=True)
class Comparison:
    """The paired comparison of experiment B against baseline A, metric by metric.

    ``warnings`` says, in words, what made the comparison partial: different dataset
    versions, metrics on one side only, an experiment still running (compared on its
    finished rows), examples not scored on both sides, a judge metric whose winner may
    owe it to longer outputs. ``verbosity``: the length check of each judge metric found
    different (``assay.comparison.verbosity``)."""

    a: SideSummary
    b: SideSummary
    metrics: list[MetricComparison]
    metrics_only_a: list[str] = field(default_factory=list)
    metrics_only_b: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cluster_by: str | None = None
    verbosity: list[VerbosityCheck] = field(default_factory=list)

    def __getitem__(self, key: str) -> MetricComparison:
        for metric in self.metrics:
            if metric.key == key:
                return metric
        known = ", ".join(m.key for m in self.metrics) or "none"
        raise KeyError(f"no compared metric {key!r}; compared: {known}")

    @property
    def worse(self) -> list[MetricComparison]:
        """The metrics on which B is detectably worse than A."""
        return [m for m in self.metrics if m.verdict == "worse"]

    @property
    def better(self) -> list[MetricComparison]:
        return [m for m in self.metrics if m.verdict == "better"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": asdict(self.a),
            "b": asdict(self.b),
            "metrics": [m.as_dict() for m in self.metrics],
            "metrics_only_a": self.metrics_only_a,
            "metrics_only_b": self.metrics_only_b,
            "warnings": self.warnings,
            "cluster_by": self.cluster_by,
            "verbosity": [check.as_dict() for check in self.verbosity],
        }
