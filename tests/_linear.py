"""How a parser's time grows with its input, robust to a loaded machine: the CPU time of
this thread is measured (time spent preempted does not count), the two sizes are timed
alternately in one process and the best of several repetitions is kept, so a burst of
load costs a repetition, not the verdict. Linear code grows ~10x for 10x the
input; quadratic code 100x, so a bound of 12x separates them with room on both sides."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

LINEAR_BOUND = 12.0


def growth(parse: Callable[[Any], object], make: Callable[[int], Any], size: int, repeats: int = 5) -> float:
    """best time on ``make(10 * size)`` / best time on ``make(size)``."""
    small, large = make(size), make(10 * size)
    parse(small)  # warm caches (compiled patterns, imports)
    best = [float("inf"), float("inf")]
    gc.disable()  # the cycle collector's passes grow with all live objects, not the parser's work
    try:
        for _ in range(repeats):
            for slot, value in enumerate((small, large)):
                started = time.thread_time()
                parse(value)
                best[slot] = min(best[slot], time.thread_time() - started)
    finally:
        gc.enable()
    return best[1] / best[0]


def assert_linear(parse: Callable[[Any], object], make: Callable[[int], Any], size: int) -> None:
    ratio = growth(parse, make, size)
    assert ratio <= LINEAR_BOUND, f"10x the input cost {ratio:.1f}x the time (linear: ~10x)"
