"""What pairwise verdicts say about their judge: does it flip with the order of the answers,
how often it calls a tie, does it favour the longer answer."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from assay.stats.agreement import Estimate, LabelledRows, estimates, spearman
from assay.stats.intervals import Interval, wilson
from assay.store.records import ComparisonRecord

__all__ = ["PairwiseBias", "pairwise_bias"]

_SIGN = {"first": 1, "second": -1, "tie": 0}


@dataclass(frozen=True)
class PairwiseBias:
    """Position and verbosity figures of one pairwise judge (rates with Wilson intervals).

    ``position_consistency``: of the pairs shown both ways, the share where both orders gave
    the same verdict (1.0: no position bias seen). ``first_shown_rate``: of the verdicts
    (as presented) that named an answer, the share naming the one shown first; 0.5 when
    shown both ways and unbiased. ``tie_rate``: ties among the final verdicts (a pair whose
    orders disagree counts as a tie). ``verbosity``: Spearman's rho of the verdict (+1 the
    first, -1 the second, 0 a tie) with the first answer's length minus the second's.
    """

    n: int
    position_consistency: float | None
    position_consistency_interval: Interval | None
    first_shown_rate: float | None
    tie_rate: float | None
    verbosity: Estimate | None

    def __str__(self) -> str:
        def rate(value: float | None, interval: Interval | None = None) -> str:
            if value is None:
                return "-"
            return f"{value:.1%}" + (f" [{interval.low:.1%}, {interval.high:.1%}]" if interval else "")

        rho = self.verbosity.value if self.verbosity is not None else None
        return (
            f"{self.n} pairwise verdicts: position consistency "
            f"{rate(self.position_consistency, self.position_consistency_interval)}, "
            f"first shown chosen {rate(self.first_shown_rate)}, ties {rate(self.tie_rate)}, "
            f"verbosity rho {'-' if rho is None else f'{rho:+.3f}'}"
        )


def pairwise_bias(records: Iterable[ComparisonRecord]) -> PairwiseBias:
    judged = [r for r in records if r.error is None and "preferred" in r.metadata]
    both = [r for r in judged if "position_consistent" in r.metadata]
    consistent = sum(1 for r in both if r.metadata["position_consistent"])
    shown = [v for r in judged for v in _presented(r.metadata.get("preference_as_presented")) if v != "tie"]
    ties = sum(1 for r in judged if r.metadata["preferred"] == "tie")
    return PairwiseBias(
        n=len(judged),
        position_consistency=consistent / len(both) if both else None,
        position_consistency_interval=wilson(consistent, len(both)) if both else None,
        first_shown_rate=sum(1 for v in shown if v == "A") / len(shown) if shown else None,
        tie_rate=ties / len(judged) if judged else None,
        verbosity=_verbosity(judged),
    )


def _presented(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)] if value is not None else []


def _verbosity(judged: list[ComparisonRecord]) -> Estimate | None:
    signs, gaps = [], []
    for record in judged:
        lengths = record.metadata.get("lengths")
        verdict = _SIGN.get(str(record.metadata.get("verdict", "")), None)
        if verdict is None or not isinstance(lengths, list) or len(lengths) != 2:
            continue
        signs.append(verdict)
        gaps.append(lengths[0] - lengths[1])
    if len(signs) < 3:
        return None
    rows = LabelledRows({"verdict": signs, "length": gaps})
    return estimates(rows, {"rho": spearman(rows.pair("verdict", "length"))}, resamples=1000)["rho"]
