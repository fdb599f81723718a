"""How much two annotators agree on a feedback key: Cohen's kappa and the share of rows
with the same label, over the rows both labelled, each with its 95% interval: the very
statistics (and percentile bootstrap) of ``assay.judge_agreement``, from ``assay.stats``."""

from __future__ import annotations

import numbers
from collections import defaultdict
from collections.abc import Hashable, Sequence
from itertools import combinations

from pydantic import BaseModel

from assay.stats import agreement as stats
from assay.ui.annotate.human import Label

__all__ = ["Agreement", "agreements"]


class Agreement(BaseModel):
    key: str
    first: str
    second: str
    n: int
    kappa: float | None  # None: undefined (both gave one and the same label throughout)
    ci_low: float | None
    ci_high: float | None
    observed: float | None = None  # the share of rows on which the two agree


def agreements(labels: Sequence[Label], keys: Sequence[str]) -> list[Agreement]:
    """Kappa for every pair of annotators on every key, over the rows both labelled."""
    found: list[Agreement] = []
    for key in keys:
        by_annotator: dict[str, dict[str, Hashable]] = defaultdict(dict)
        for label in labels:
            category = _category(label) if label.key == key else None
            if category is not None:  # a label with neither a value nor a score says nothing here
                by_annotator[label.annotator][label.run_id] = category
        for first, second in combinations(sorted(by_annotator), 2):
            shared = sorted(by_annotator[first].keys() & by_annotator[second].keys())
            if shared:
                columns = {name: [by_annotator[name][r] for r in shared] for name in (first, second)}
                found.append(_agreement(key, first, second, columns))
    return found


def _agreement(key: str, first: str, second: str, columns: dict[str, list[Hashable]]) -> Agreement:
    rows = stats.LabelledRows(_one_kind(columns))
    pair = rows.pair(first, second)
    figures = stats.estimates(rows, {"kappa": stats.cohen_kappa(pair), "observed": stats.accuracy(pair)})
    kappa = figures["kappa"]
    return Agreement(
        key=key,
        first=first,
        second=second,
        n=rows.n,
        kappa=kappa.value,
        ci_low=kappa.interval.low if kappa.interval else None,
        ci_high=kappa.interval.high if kappa.interval else None,
        observed=figures["observed"].value,
    )


def _one_kind(columns: dict[str, list[Hashable]]) -> dict[str, list[Hashable]]:
    """Labels the statistics can sort together: numbers, else all as text."""
    values = [v for labels in columns.values() for v in labels]
    if all(isinstance(v, numbers.Real) for v in values) or all(isinstance(v, str) for v in values):
        return columns
    return {name: [str(v) for v in labels] for name, labels in columns.items()}


def _category(label: Label) -> Hashable | None:
    value = label.value
    return value if isinstance(value, (str, int, float, bool)) else label.score
