"""People's labels as lines of text, for ``assay show`` and other plain reports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from assay.human.labels import NOTE_KEY, SKIP_KEY, Label
from assay.human.stats import human_mean

__all__ = ["human_columns", "human_lines", "human_records", "human_summary"]


def human_lines(labels: Sequence[Label]) -> list[str]:
    """One line per key: the mean with its interval, or a label key's counts."""
    lines = []
    for key, figures in human_summary(labels).items():
        annotators = figures["annotators"]
        who = f"{annotators} annotator{'s' if annotators != 1 else ''}"
        if "mean" in figures:
            ci = (
                f" [{figures['ci_low']:.3f}, {figures['ci_high']:.3f}] {figures['ci_method']}"
                if figures["ci_low"] is not None
                else ""
            )
            lines.append(f"  {key}: {figures['mean']:.3f}{ci} ({figures['rows']} rows, {who})")
        else:
            shown = ", ".join(f"{label} {count}" for label, count in figures["counts"].items())
            lines.append(f"  {key}: {shown} ({who})")
    return lines


def human_summary(labels: Sequence[Label]) -> dict[str, dict[str, Any]]:
    """Per key: a scored key's mean over rows (a row's annotators averaged) with its 95%
    interval, or a label key's counts, most frequent first; and how many annotators."""
    summary: dict[str, dict[str, Any]] = {}
    for key in _keys(labels):
        found = [x for x in labels if x.key == key]
        figures: dict[str, Any] = {"annotators": len({x.annotator for x in found})}
        scored = [x.score for x in found if x.score is not None]
        if scored:
            thumbs = all(s in (0, 1) for s in scored)
            mean = human_mean(found, key, (min(scored), max(scored)), thumbs=thumbs)
            interval = mean.interval
            figures.update(
                mean=mean.mean,
                ci_low=interval.low if interval else None,
                ci_high=interval.high if interval else None,
                ci_method=interval.method if interval else None,
                rows=mean.rows,
            )
        else:
            figures["counts"] = dict(Counter(str(x.value) for x in found).most_common())
        summary[key] = figures
    return summary


def human_records(labels: Sequence[Label]) -> list[dict[str, Any]]:
    """Each annotator's latest label per row and key, comments and corrections included."""
    return [
        {
            "run_id": x.run_id,
            "key": x.key,
            "annotator": x.annotator,
            "score": x.score,
            "value": x.value,
            "comment": x.comment,
            "correction": x.correction,
            "created_at": x.created_at,
        }
        for x in labels
    ]


def human_columns(labels: Sequence[Label]) -> dict[str, str | float]:
    """A row's labels as flat columns: ``human.<key>`` the annotators' mean or their labels."""
    columns: dict[str, str | float] = {}
    for key in _keys(labels):
        found = sorted((x for x in labels if x.key == key), key=lambda x: x.annotator)
        scores = [float(x.score) for x in found if x.score is not None]
        if scores and len(scores) == len(found):
            columns[f"human.{key}"] = sum(scores) / len(scores)
        else:
            columns[f"human.{key}"] = " / ".join(str(x.value) for x in found)
    return columns


def _keys(labels: Sequence[Label]) -> list[str]:
    return [k for k in dict.fromkeys(x.key for x in labels) if k not in (NOTE_KEY, SKIP_KEY)]
