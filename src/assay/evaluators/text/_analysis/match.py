"""The completeness coverage rule, used for the score *and* for ``missing_elements``.

An element of 3 characters or fewer must match exactly; a longer one matches a form that
contains it, or that it contains, when the shorter is over 60% of the longer
("environment" ~ "environmental"). Chinese and Japanese words of two or more characters
are matched in the output's running text, so a different segmentation of the same
characters ("可再生能源" vs "可再生" + "能源") does not lose them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from assay.evaluators.text._analysis.elements import Element, TextElements

SHORT_TERM = 3  # characters; at most this long, a term must match exactly
MIN_OVERLAP = 0.6  # the shorter over the longer must exceed this


class CoverageIndex:
    """The output's elements, indexed for the coverage test."""

    def __init__(self, offered: TextElements) -> None:
        self.forms: set[str] = set()
        for element in offered.elements:
            self.forms.update(element.forms)
        self._by_length = sorted(self.forms, key=len)
        self._lengths = [len(form) for form in self._by_length]
        self._han_text = "\n".join(offered.han_runs)

    def covers(self, element: Element) -> bool:
        if self.covers_exactly(element):
            return True
        return any(self._overlaps(form) for form in element.forms if len(form) > SHORT_TERM)

    def covers_exactly(self, element: Element) -> bool:
        """A shared form (or, for Chinese and Japanese, the same characters in the output)."""
        if element.script == "han" and len(element.text) > 1 and element.text in self._han_text:
            return True
        return not self.forms.isdisjoint(element.forms)

    def _overlaps(self, form: str) -> bool:
        size = len(form)
        low = bisect.bisect_right(self._lengths, size * MIN_OVERLAP)
        high = bisect.bisect_left(self._lengths, size / MIN_OVERLAP)
        for other in self._by_length[low:high]:
            shorter, longer = (other, form) if len(other) <= size else (form, other)
            if shorter in longer and len(shorter) / len(longer) > MIN_OVERLAP:
                return True
        return False


def split_covered(required: Iterable[Element], index: CoverageIndex) -> tuple[list[str], list[str]]:
    """``(covered, missing)`` element texts, in input order."""
    covered: list[str] = []
    missing: list[str] = []
    for element in required:
        (covered if index.covers(element) else missing).append(element.text)
    return covered, missing
