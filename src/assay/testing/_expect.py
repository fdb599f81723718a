"""``expect``: assertions whose outcome is also recorded as feedback (LangSmith's shape).

``expect(x).to_equal(y)`` records ``expectation`` = 1 or 0 and raises AssertionError when
the check fails; ``expect.score(s, key=...)`` and ``expect.edit_distance(a, b)`` record
a score and return an expectation about it. Inside a test marked ``@pytest.mark.assay``
(or ``langsmith``) the outcomes are stored with the test's row; anywhere else ``expect``
is a plain assertion that records nothing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, overload

from assay.testing import _test_log


class Expectation:
    """Checks on one value; every check records its outcome (1 or 0) under ``key``."""

    def __init__(self, value: Any, key: str = "expectation", name: str = "value") -> None:
        self.value = value
        self.key = key
        self.name = name

    def _check(self, passed: bool, description: str, method: str) -> Expectation:
        comment = f"Success: {self.name}.{method}" if passed else f"Expected {self.name} {description}"
        _record(key=self.key, score=1 if passed else 0, comment=comment)
        if not passed:
            raise AssertionError(comment)
        return self

    def to_equal(self, expected: Any) -> Expectation:
        return self._check(self.value == expected, f"to be equal to {expected!r}, but got {self.value!r}",
                           "to_equal")  # fmt: skip

    def to_contain(self, part: Any) -> Expectation:
        return self._check(part in self.value, f"to contain {part!r}, but got {self.value!r}", "to_contain")

    def to_be_less_than(self, bound: float) -> Expectation:
        return self._check(self.value < bound, f"to be less than {bound!r}, but got {self.value!r}",
                           "to_be_less_than")  # fmt: skip

    def to_be_greater_than(self, bound: float) -> Expectation:
        return self._check(self.value > bound, f"to be greater than {bound!r}, but got {self.value!r}",
                           "to_be_greater_than")  # fmt: skip

    def to_be_between(self, low: float, high: float) -> Expectation:
        """Inclusive bounds (LangSmith's are exclusive; every value that passes there passes here)."""
        return self._check(low <= self.value <= high,
                           f"to be between {low!r} and {high!r}, but got {self.value!r}",
                           "to_be_between")  # fmt: skip

    def to_be_approximately(self, expected: float, precision: int = 2) -> Expectation:
        """Equal once both are rounded to ``precision`` decimal places."""
        close = round(self.value, precision) == round(expected, precision)
        return self._check(close, f"to be approximately {expected!r}, but got {self.value!r}",
                           "to_be_approximately")  # fmt: skip

    def to_be_none(self) -> Expectation:
        return self._check(self.value is None, f"to be None, but got {self.value!r}", "to_be_none")

    def against(self, predicate: Callable[[Any], Any], description: str | None = None) -> Expectation:
        name = description or f"{getattr(predicate, '__name__', 'the predicate')}{_signature(predicate)}"
        return self._check(bool(predicate(self.value)), f"to satisfy {name}", "against")


class _Expect:
    @overload
    def __call__(self, value: Any, /) -> Expectation: ...

    @overload
    def __call__(self, /, *, client: Any) -> _Expect: ...

    def __call__(self, value: Any = ..., /, *, client: Any = None) -> Expectation | _Expect:
        """``expect(value)``; ``expect(client=...)`` is accepted for LangSmith code (the
        outcomes go where the test's row goes, whatever client is named)."""
        return self if value is ... else Expectation(value)

    def value(self, value: Any) -> Expectation:
        return Expectation(value)

    def score(
        self,
        score: float,
        *,
        key: str = "score",
        source_run_id: Any = None,
        comment: str | None = None,
    ) -> Expectation:
        """Record ``score`` under ``key``; the returned expectation checks it."""
        _record(key=key, score=score, comment=comment)
        return Expectation(score, key=f"{key}_expectation", name=key)

    def edit_distance(self, prediction: str, reference: str, *, config: Any = None) -> Expectation:
        """Record the normalized Levenshtein distance (0 identical, 1 nothing shared)."""
        distance = _normalized_levenshtein(str(prediction), str(reference))
        _record(key="edit_distance", score=distance, direction="lower", score_range=(0, 1))
        return Expectation(distance, key="edit_distance_expectation", name="edit_distance")


def _record(**feedback: Any) -> None:
    """Store the outcome with the running test's row, if a marked test is running."""
    if _test_log.current() is not None:
        _test_log.log_feedback(**feedback)


def _signature(predicate: Callable[..., Any]) -> str:
    try:
        return str(inspect.signature(predicate))
    except (TypeError, ValueError):
        return ""


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
