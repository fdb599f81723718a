"""Does the winner just write more? A length check on the judge metrics a comparison finds
different.

LLM judges are known to favour longer answers. When a judge metric (its results carry the
judge ``model``) comes out ``better`` or ``worse``, this pairs the examples both sides
scored and asks whether, example by example, the score's change toward better goes with
the output's change in length: Spearman's rho, with a bootstrap 95% interval. The check
is *flagged* when the side that won also wrote longer outputs on average and the interval
lies above 0: the difference may be length as much as quality, and a length-controlled
look (a judge told to ignore length, answers cut to one length, people's labels) should
settle it. Repetitions are averaged per example on each side, as the comparison does.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from assay._output_text import output_text
from assay.stats.agreement import LabelledRows, estimates, spearman
from assay.store.codec import loads
from assay.store.read.pairing import scored_with_outputs

__all__ = ["VerbosityCheck", "verbosity_check"]

_MIN_PAIRS = 5  # fewer examples than this say nothing about a correlation
_RESAMPLES = 1000


@dataclass(frozen=True)
class VerbosityCheck:
    """One judge metric's length check (see the module)."""

    key: str
    n: int
    mean_length_a: float
    mean_length_b: float
    rho: float | None
    ci95: tuple[float, float] | None
    flagged: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "n": self.n,
            "mean_length_a": self.mean_length_a,
            "mean_length_b": self.mean_length_b,
            "rho": self.rho,
            "ci95": list(self.ci95) if self.ci95 is not None else None,
            "flagged": self.flagged,
        }

    def sentence(self, a: str, b: str) -> str:
        """One line for the report."""
        rho = "-" if self.rho is None else f"{self.rho:+.2f}"
        interval = "" if self.ci95 is None else f" [{self.ci95[0]:+.2f}, {self.ci95[1]:+.2f}]"
        said = (
            f"verbosity check on judge metric {self.key!r}: outputs average "
            f"{self.mean_length_a:.0f} characters in {a!r} and {self.mean_length_b:.0f} in {b!r}; "
            f"score gain vs length gain per example rho {rho}{interval}, n={self.n}"
        )
        if self.flagged:
            said += (
                ": the winner also writes longer outputs and its gains go with length; "
                "the judge may favour length (check with a length-controlled judge or people's labels)"
            )
        return said


def verbosity_check(
    conn: sqlite3.Connection, a: str, b: str, key: str, sign: float, b_won: bool
) -> VerbosityCheck | None:
    """The check of metric ``key`` between experiments ``a`` and ``b`` (ids); ``sign`` -1
    for a lower-is-better metric; ``b_won``: whether B came out better. None when the
    metric is not a judge's or too few examples pair."""
    side_a, judged_a = _per_example(conn, a, key)
    side_b, judged_b = _per_example(conn, b, key)
    if not (judged_a or judged_b):
        return None
    paired = [example for example in side_a if example in side_b]
    if len(paired) < _MIN_PAIRS:
        return None
    gains = [sign * (side_b[e][0] - side_a[e][0]) for e in paired]
    longer = [side_b[e][1] - side_a[e][1] for e in paired]
    length_a = sum(side_a[e][1] for e in paired) / len(paired)
    length_b = sum(side_b[e][1] for e in paired) / len(paired)
    rows = LabelledRows({"gain": gains, "longer": longer})
    found = estimates(rows, {"rho": spearman(rows.pair("gain", "longer"))}, resamples=_RESAMPLES)["rho"]
    ci95 = None if found.interval is None else (found.interval.low, found.interval.high)
    winner_longer = length_b > length_a if b_won else length_a > length_b
    flagged = winner_longer and ci95 is not None and ci95[0] > 0
    return VerbosityCheck(key, len(paired), length_a, length_b, found.value, ci95, flagged)


def _per_example(
    conn: sqlite3.Connection, experiment: str, key: str
) -> tuple[dict[str, tuple[float, float]], bool]:
    """Per example: (mean score, mean output length in characters); and whether a judge
    gave the scores."""
    scores: dict[str, list[float]] = defaultdict(list)
    lengths: dict[str, list[int]] = defaultdict(list)
    judged = False
    for example, score, metadata, outputs in scored_with_outputs(conn, experiment, key):
        if not judged:
            found = loads(metadata)
            judged = isinstance(found, dict) and "model" in found
        scores[example].append(float(score))
        lengths[example].append(len(output_text(loads(outputs))))
    means = {
        example: (sum(values) / len(values), sum(lengths[example]) / len(lengths[example]))
        for example, values in scores.items()
    }
    return means, judged
