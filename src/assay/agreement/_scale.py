"""What kind of labels two raters gave, and the labels made comparable.

``nominal``: categories without order (text, or two values such as 0/1, pass/fail);
``ordinal``: a few whole numbers (a 1-5 rubric); ``continuous``: anything else numeric.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

__all__ = ["ORDINAL_LEVELS", "Scale", "comparable", "detect_scale"]

Scale = Literal["nominal", "ordinal", "continuous"]
SCALES = ("nominal", "ordinal", "continuous")
ORDINAL_LEVELS = 11  # a 0-10 rubric is still ordinal; more distinct whole numbers are continuous


def comparable(label: Any, *, where: str) -> float | str:
    """A label as a number (bools as 0/1) or a text category; anything else is an error."""
    if isinstance(label, bool):
        return int(label)
    if isinstance(label, (int, float)):
        if isinstance(label, float) and not math.isfinite(label):
            raise ValueError(f"{where}: a label must be finite, got {label!r}")
        return int(label) if float(label).is_integer() else float(label)
    if isinstance(label, str):
        return label.strip()
    raise ValueError(
        f"{where}: a label must be a number, a bool or a text category, got {type(label).__name__} "
        f"{label!r:.80}; point the key at one field (e.g. 'outputs.score')"
    )


def detect_scale(first: Sequence[Any], second: Sequence[Any], names: tuple[str, str]) -> Scale:
    """The scale both raters' labels fit; text on one side and numbers on the other is an error."""
    kinds = [_kind(labels) for labels in (first, second)]
    if "mixed" in kinds or ("text" in kinds and "number" in kinds):
        described = ", ".join(f"{name}: {kind}" for name, kind in zip(names, kinds, strict=True))
        raise ValueError(
            f"the raters' labels are not of one kind ({described}); compare numbers with "
            "numbers (a judge's score) or text with text (its value)"
        )
    if "text" in kinds:
        return "nominal"
    values = set(first) | set(second)
    if len(values) <= 2:
        return "nominal"
    if all(isinstance(v, int) for v in values) and len(values) <= ORDINAL_LEVELS:
        return "ordinal"
    return "continuous"


def _kind(labels: Sequence[Any]) -> str:
    text = sum(1 for label in labels if isinstance(label, str))
    if text == 0:
        return "number"
    return "text" if text == len(labels) else "mixed"
