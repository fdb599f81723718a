"""Argument checks the evaluation entry points share (the re-score uses them; ``_api`` has
its own copies until it moves here)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any


def as_list(evaluators: Sequence[Any] | None, parameter: str) -> list[Any]:
    if evaluators is None:
        return []
    if callable(evaluators) or isinstance(evaluators, (str, bytes)) or not hasattr(evaluators, "__iter__"):
        raise TypeError(f"{parameter}= takes a list, e.g. {parameter}=[my_evaluator]; got {evaluators!r}")
    return list(evaluators)


def concurrency(max_concurrency: int | None) -> int:
    """Rows in flight: ``None`` or 0 means 4 per CPU."""
    if not max_concurrency:
        return 4 * (os.cpu_count() or 1)
    if max_concurrency < 0:
        raise ValueError(f"max_concurrency must be positive, got {max_concurrency}")
    return max_concurrency
