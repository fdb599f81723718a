"""People's labels summed up: per row (a cell in the row table) and per key (the
experiment page's human metric with its 95% interval)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence

from assay.human import human_mean
from assay.stats.intervals import wilson
from assay.ui.annotate.human import Label
from assay.ui.annotate.keys import FeedbackKey
from assay.ui.models import HumanCell, HumanMetric, LabelShare

__all__ = ["human_cells", "human_metrics"]


def human_cells(labels: Sequence[Label], keys: Sequence[FeedbackKey]) -> dict[str, list[HumanCell]]:
    """Per run, one cell per defined key that someone labelled, in the keys' order."""
    grouped: dict[tuple[str, str], list[Label]] = defaultdict(list)
    for label in labels:
        grouped[(label.run_id, label.key)].append(label)
    cells: dict[str, list[HumanCell]] = defaultdict(list)
    for run_id in dict.fromkeys(label.run_id for label in labels):
        for key in keys:
            found = sorted(grouped.get((run_id, key.key), []), key=lambda x: x.annotator)
            if found:
                cells[run_id].append(_cell(key, found))
    return cells


def _cell(key: FeedbackKey, found: list[Label]) -> HumanCell:
    scores = [x.score for x in found if x.score is not None]
    return HumanCell(
        key=key.key,
        score=statistics.fmean(scores) if key.scored and scores else None,
        labels=[_text(x) for x in found],
        annotators=len(found),
    )


def human_metrics(labels: Sequence[Label], keys: Sequence[FeedbackKey]) -> list[HumanMetric]:
    """One metric per defined key that has labels."""
    metrics = []
    for key in keys:
        found = [x for x in labels if x.key == key.key]
        if found:
            metrics.append(_scored(key, found) if key.scored else _shares(key, found))
    return metrics


def _scored(key: FeedbackKey, found: list[Label]) -> HumanMetric:
    scores = [c.score for c in key.choices if c.score is not None]
    mean = human_mean(found, key.key, (min(scores), max(scores)), thumbs=key.kind == "thumbs")
    interval = mean.interval
    return HumanMetric(
        key=key.key,
        kind=key.kind,
        rows=mean.rows,
        labels=mean.labels,
        annotators=sorted({x.annotator for x in found}),
        mean=mean.mean,
        ci_low=interval.low if interval else None,
        ci_high=interval.high if interval else None,
        ci_method=interval.method if interval else None,
    )


def _shares(key: FeedbackKey, found: list[Label]) -> HumanMetric:
    counts = Counter(_text(x) for x in found)
    total = sum(counts.values())
    shares = []
    for choice in key.choices:
        count = counts.get(choice.text, 0)
        interval = wilson(count, total)
        shares.append(
            LabelShare(
                label=choice.text,
                count=count,
                share=count / total,
                ci_low=interval.low,
                ci_high=interval.high,
            )
        )
    return HumanMetric(
        key=key.key,
        kind=key.kind,
        rows=len({x.run_id for x in found}),
        labels=total,
        annotators=sorted({x.annotator for x in found}),
        mean=None,
        ci_method="Wilson",
        shares=shares,
    )


def _text(label: Label) -> str:
    if isinstance(label.value, str):
        return label.value
    if label.score is not None:
        return f"{label.score:g}"
    return "—"
