"""``--baseline EXP --max-regression metric=D``: the paired comparison with a baseline, as a gate.

A gate fails when B is significantly worse than the baseline (the comparison's verdict
``worse``, Holm-corrected across the gated metrics) and the regression's point estimate
exceeds D. A point estimate alone would fail builds on noise; significance alone would
fail them on drops too small to matter once the dataset is large. A drop beyond D that is
not significant passes, with the smallest detectable difference in the detail.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.cli._common import UsageError
from assay.cli._gates import Verdict, parse_metric_threshold

if TYPE_CHECKING:
    from assay.comparison import MetricComparison
    from assay.evaluation import ExperimentResults


@dataclass(frozen=True)
class MaxRegression:
    metric: str
    margin: float


def parse_max_regression(text: str) -> MaxRegression:
    metric, value = parse_metric_threshold(text, "--max-regression")
    try:
        margin = float(value)
    except ValueError:
        raise UsageError(f"--max-regression {text!r}: {value!r} is not a number") from None
    if margin < 0:
        raise UsageError(f"--max-regression {text!r}: the tolerated regression cannot be negative")
    return MaxRegression(metric, margin)


def check_regressions(results: ExperimentResults, args: argparse.Namespace) -> list[Verdict]:
    from assay.client import Client
    from assay.comparison import compare
    from assay.errors import NotComparableError

    gates = [parse_max_regression(text) for text in args.max_regression]
    if not gates:
        raise UsageError("--baseline needs at least one --max-regression METRIC=D (the tolerated drop)")
    if not args.baseline:
        raise UsageError("--max-regression needs --baseline EXPERIMENT (the experiment to compare with)")
    client = Client(results.store_url)
    try:
        comparison = compare(
            args.baseline,
            results.experiment_name,
            client=client,
            metrics=[g.metric for g in gates],
        )
    except (KeyError, NotComparableError) as exc:
        raise UsageError(f"--baseline {args.baseline}: {str(exc).strip(chr(34) + chr(39))}") from None
    finally:
        client.close()
    return [_verdict(comparison[gate.metric], gate, args.baseline) for gate in gates]


def _verdict(metric: MetricComparison, gate: MaxRegression, baseline: str) -> Verdict:
    label = f"{gate.metric} regression <= {gate.margin:g} vs {baseline}"
    if metric.difference is None or metric.mean_a is None or metric.mean_b is None:
        return Verdict(
            label,
            gate.metric,
            None,
            gate.margin,
            False,
            f"no example scored on both sides ({metric.verdict})",
        )
    drop = -metric.difference if metric.direction == "higher" else metric.difference
    significant = metric.verdict == "worse"
    passed = not (significant and drop > gate.margin)
    ci = "" if metric.ci95 is None else f", 95% CI [{metric.ci95[0]:+.3f}, {metric.ci95[1]:+.3f}]"
    p = "" if metric.p_holm is None else f", p={metric.p_holm:.3g}"
    change = (
        f"{metric.mean_a:.3f} -> {metric.mean_b:.3f} ({metric.difference:+.3f}{ci}{p}, n={metric.n_paired})"
    )
    if significant:
        note = "significantly worse" + ("" if passed else f", by more than {gate.margin:g}")
    elif drop > gate.margin:
        mde = "" if metric.mde is None else f"; the smallest detectable difference here is {metric.mde:.3f}"
        note = f"not significant{mde}"
    else:
        note = metric.verdict
    return Verdict(label, gate.metric, drop, gate.margin, passed, f"{change}: {note}")
