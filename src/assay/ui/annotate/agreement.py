"""How much two annotators agree: Cohen's kappa on the rows both labelled, with a 95%
interval from its large-sample standard error (Fleiss, Cohen and Everitt, 1969)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from itertools import combinations
from statistics import NormalDist

from pydantic import BaseModel

from assay.ui.annotate.human import Label

__all__ = ["Agreement", "Kappa", "agreements", "cohen_kappa"]

_Z95 = NormalDist().inv_cdf(0.975)


class Kappa(BaseModel):
    kappa: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    observed: float | None = None  # the share of items on which the two agree


class Agreement(Kappa):
    key: str
    first: str
    second: str


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> Kappa:
    """Kappa of two raters' labels on the same items (``first[i]`` and ``second[i]``)."""
    n = len(first)
    if n != len(second):
        raise ValueError("cohen_kappa needs one label of each rater per item")
    if n == 0:
        return Kappa(kappa=None, ci_low=None, ci_high=None, n=0)
    joint = {pair: count / n for pair, count in Counter(zip(first, second, strict=True)).items()}
    pa = {c: v / n for c, v in Counter(first).items()}
    pb = {c: v / n for c, v in Counter(second).items()}
    observed = sum(share for (x, y), share in joint.items() if x == y)
    chance = sum(p * pb.get(c, 0.0) for c, p in pa.items())
    if chance >= 1:  # both gave one and the same label throughout: kappa is undefined
        return Kappa(kappa=None, ci_low=None, ci_high=None, n=n, observed=observed)
    kappa = (observed - chance) / (1 - chance)
    half = _Z95 * _stderr(joint, pa, pb, n, chance, kappa)
    low, high = max(kappa - half, -1.0), min(kappa + half, 1.0)
    return Kappa(kappa=kappa, ci_low=low, ci_high=high, n=n, observed=observed)


def _stderr(
    joint: dict[tuple[Hashable, Hashable], float],
    pa: dict[Hashable, float],
    pb: dict[Hashable, float],
    n: int,
    chance: float,
    kappa: float,
) -> float:
    """Fleiss, Cohen and Everitt's (1969) large-sample standard error of kappa."""
    agree = sum(
        share * (1 - (pa.get(x, 0.0) + pb.get(x, 0.0)) * (1 - kappa)) ** 2
        for (x, y), share in joint.items()
        if x == y
    )
    disagree = (1 - kappa) ** 2 * sum(
        share * (pb.get(x, 0.0) + pa.get(y, 0.0)) ** 2 for (x, y), share in joint.items() if x != y
    )
    rest = (kappa - chance * (1 - kappa)) ** 2
    return math.sqrt(max(agree + disagree - rest, 0.0) / (n * (1 - chance) ** 2))


def agreements(labels: Sequence[Label], keys: Sequence[str]) -> list[Agreement]:
    """Kappa for every pair of annotators on every key, over the rows both labelled."""
    found: list[Agreement] = []
    for key in keys:
        by_annotator: dict[str, dict[str, Hashable]] = defaultdict(dict)
        for label in labels:
            if label.key == key:
                by_annotator[label.annotator][label.run_id] = _category(label)
        for first, second in combinations(sorted(by_annotator), 2):
            shared = sorted(by_annotator[first].keys() & by_annotator[second].keys())
            if not shared:
                continue
            kappa = cohen_kappa(
                [by_annotator[first][r] for r in shared], [by_annotator[second][r] for r in shared]
            )
            found.append(Agreement(key=key, first=first, second=second, **kappa.model_dump()))
    return found


def _category(label: Label) -> Hashable:
    value = label.value
    return value if isinstance(value, (str, int, float, bool)) else label.score
