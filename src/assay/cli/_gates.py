"""Release gates: ``--fail-under metric=0.8[@lower]`` on an experiment's results.

A gate reads a row metric's mean (or, with ``@lower``, the lower bound of its 95% CI, so a
small lucky sample does not pass), or a summary metric's score. A metric the experiment
does not have is a usage error (a typo must not pass a build).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay._suggest import did_you_mean
from assay.cli._common import UsageError

if TYPE_CHECKING:
    from assay.evaluation import ExperimentResults
    from assay.report.errors import MetricErrors


@dataclass(frozen=True)
class Verdict:
    """One gate's outcome, as printed in the verdict table and written to JSON/JUnit."""

    gate: str
    metric: str
    observed: float | None
    threshold: float
    passed: bool
    detail: str

    def as_dict(self) -> dict[str, object]:
        return {
            "gate": self.gate,
            "metric": self.metric,
            "observed": self.observed,
            "threshold": self.threshold,
            "passed": self.passed,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class FailUnder:
    metric: str
    threshold: float
    on_lower_bound: bool


def parse_metric_threshold(text: str, flag: str) -> tuple[str, str]:
    metric, sep, value = str(text).partition("=")
    if not sep or not metric.strip() or not value.strip():
        raise UsageError(f"{flag} {text!r} must be METRIC=NUMBER, e.g. {flag} correct=0.8")
    return metric.strip(), value.strip()


def parse_fail_under(text: str) -> FailUnder:
    metric, value = parse_metric_threshold(text, "--fail-under")
    number, at, bound = value.partition("@")
    if at and bound not in ("lower", "mean"):
        raise UsageError(f"--fail-under {text!r}: after '@' write 'lower' (the CI's lower bound) or 'mean'")
    try:
        threshold = float(number)
    except ValueError:
        raise UsageError(f"--fail-under {text!r}: {number!r} is not a number") from None
    return FailUnder(metric, threshold, bound == "lower")


def metric_names(results: ExperimentResults) -> list[str]:
    return [*results.aggregate, *(r.key for r in results.summary_results.results)]


def check_fail_under(results: ExperimentResults, gate: FailUnder) -> Verdict:
    aggregate = results.aggregate.get(gate.metric)
    summary = {r.key: r for r in results.summary_results.results}.get(gate.metric)
    if aggregate is None and summary is None:
        known = metric_names(results)
        raise UsageError(
            f"--fail-under {gate.metric}: experiment {results.experiment_name!r} has no metric "
            f"{gate.metric!r}{did_you_mean(gate.metric, known)}; its metrics: {', '.join(known) or 'none'}"
        )
    label = f"{gate.metric} >= {gate.threshold:g}" + (" (CI lower bound)" if gate.on_lower_bound else "")
    if aggregate is not None:
        observed = aggregate.ci_low if gate.on_lower_bound else aggregate.mean
        missing = "no 95% CI (fewer than 2 examples scored)" if gate.on_lower_bound else "no scored rows"
    else:
        assert summary is not None
        observed = summary.numeric_score
        missing = f"the summary evaluator failed: {summary.error}" if summary.error else "no numeric score"
    if observed is None:
        return Verdict(label, gate.metric, None, gate.threshold, False, missing)
    passed = observed >= gate.threshold
    detail = f"{observed:.3f} {'>=' if passed else '<'} {gate.threshold:g}"
    return Verdict(label, gate.metric, observed, gate.threshold, passed, detail)


def parse_max_error_rate(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        rate = float(text)
    except ValueError:
        raise UsageError(f"--max-error-rate {text!r} is not a number: give a share, e.g. 0.05") from None
    if not 0 <= rate <= 1:
        raise UsageError(f"--max-error-rate {text!r} must lie between 0 and 1 (a share of the rows)")
    return rate


def check_errors(digest: list[MetricErrors], max_rate: float | None) -> list[Verdict]:
    """An evaluator that errored on every row it was given always fails (its mean is no
    number at all); with ``--max-error-rate R``, so does any whose share of errors is over R.
    The detail carries the most frequent message, so the log says what went wrong."""
    verdicts = []
    for metric in digest:
        failed = metric.every_row if max_rate is None else metric.rate > max_rate
        if not failed and max_rate is None:
            continue
        label = f"{metric.metric} errors" + ("" if max_rate is None else f" <= {max_rate:g}")
        detail = f"{metric.errors} of {metric.given} rows errored"
        if metric.groups:
            top = metric.groups[0]
            detail += f"; {top.count} x {top.message} (row {top.row_id})"
        threshold = 1.0 if max_rate is None else max_rate
        verdicts.append(Verdict(label, metric.metric, metric.rate, threshold, not failed, detail))
    return verdicts
