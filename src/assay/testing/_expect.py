"""``expect``: assertions whose outcome is also recorded as feedback (LangSmith's shape).

``expect(x).to_equal(y)`` records ``expectation`` = 1 or 0 and raises AssertionError when
the check fails; ``expect.score(s, key=...)`` and ``expect.edit_distance(a, b)`` record
a score and return an expectation about it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.testing._test_log import log_feedback


class Expectation:
    def __init__(self, value: Any, key: str = "expectation") -> None:
        self.value = value
        self.key = key

    def _check(self, passed: bool, description: str) -> Expectation:
        comment = f"expected {self.value!r} {description}"
        log_feedback(key=self.key, score=1 if passed else 0, comment=None if passed else comment)
        if not passed:
            raise AssertionError(comment)
        return self

    def to_equal(self, expected: Any) -> Expectation:
        return self._check(self.value == expected, f"to equal {expected!r}")

    def to_contain(self, part: Any) -> Expectation:
        return self._check(part in self.value, f"to contain {part!r}")

    def to_be_less_than(self, bound: float) -> Expectation:
        return self._check(self.value < bound, f"to be less than {bound!r}")

    def to_be_greater_than(self, bound: float) -> Expectation:
        return self._check(self.value > bound, f"to be greater than {bound!r}")

    def to_be_between(self, low: float, high: float) -> Expectation:
        return self._check(low <= self.value <= high, f"to be between {low!r} and {high!r}")

    def to_be_none(self) -> Expectation:
        return self._check(self.value is None, "to be None")

    def against(self, predicate: Callable[[Any], bool], description: str | None = None) -> Expectation:
        name = description or getattr(predicate, "__name__", "the predicate")
        return self._check(bool(predicate(self.value)), f"to satisfy {name}")


class _Expect:
    def __call__(self, value: Any) -> Expectation:
        return Expectation(value)

    def value(self, value: Any) -> Expectation:
        return Expectation(value)

    def score(self, score: float, *, key: str = "score") -> Expectation:
        """Record ``score`` under ``key``; the returned expectation checks it."""
        log_feedback(key=key, score=score)
        return Expectation(score, key=f"{key}_expectation")

    def edit_distance(self, prediction: str, reference: str) -> Expectation:
        """Record the normalized Levenshtein distance (0 identical, 1 nothing shared)."""
        distance = _normalized_levenshtein(str(prediction), str(reference))
        log_feedback(key="edit_distance", score=distance, direction="lower", score_range=(0, 1))
        return Expectation(distance, key="edit_distance_expectation")


def _normalized_levenshtein(a: str, b: str) -> float:
    if not a and not b:
        return 0.0
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1] / max(len(a), len(b))


expect = _Expect()
