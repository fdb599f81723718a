"""People's labels as lines of text, for ``assay show`` and other plain reports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from assay.human.labels import NOTE_KEY, SKIP_KEY, Label
from assay.human.stats import human_mean

__all__ = ["human_lines", "human_columns"]


def human_lines(labels: Sequence[Label]) -> list[str]:
    """One line per key: the mean with its interval, or a label key's counts."""
    lines = []
    for key in _keys(labels):
        found = [x for x in labels if x.key == key]
        annotators = len({x.annotator for x in found})
        scored = [x.score for x in found if x.score is not None]
        who = f"{annotators} annotator{'s' if annotators != 1 else ''}"
        if scored:
            thumbs = all(s in (0, 1) for s in scored)
            mean = human_mean(found, key, (min(scored), max(scored)), thumbs=thumbs)
            interval = mean.interval
            ci = f" [{interval.low:.3f}, {interval.high:.3f}] {interval.method}" if interval else ""
            lines.append(f"  {key}: {mean.mean:.3f}{ci} ({mean.rows} rows, {who})")
        else:
            counts = Counter(str(x.value) for x in found)
            shown = ", ".join(f"{label} {count}" for label, count in counts.most_common())
            lines.append(f"  {key}: {shown} ({who})")
    return lines


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
