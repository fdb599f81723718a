"""Rows of two result sets matched as multisets: duplicates count, floats within a tolerance.

Exact matches are found by hashing. What is left over is matched within the
tolerance: rows are grouped by their non-numeric cells (which must be equal) and,
inside a group, candidates are found by binary search on the numeric column with
the most distinct values, so a result with thousands of slightly different floats
stays fast. A budget bounds the work on adversarial inputs.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from assay.evaluators.sql._values import Row, Tolerance, is_tolerant_number, rows_close

# Row comparisons allowed in the tolerance pass before it gives up (leaving rows unmatched).
TOLERANCE_BUDGET = 2_000_000


@dataclass
class RowMatch:
    """How many rows matched, and the rows left over on each side (in result order)."""

    matched: int
    missing: list[Row] = field(default_factory=list)
    unexpected: list[Row] = field(default_factory=list)
    budget_exhausted: bool = False


def match_rows(reference: list[Row], generated: list[Row], tolerance: float | Tolerance) -> RowMatch:
    """Match ``generated`` rows against ``reference`` rows as multisets."""
    reference_counts = Counter(reference)
    generated_counts = Counter(generated)
    common = reference_counts & generated_counts
    result = RowMatch(
        matched=sum(common.values()),
        missing=list((reference_counts - common).elements()),
        unexpected=list((generated_counts - common).elements()),
    )
    if Tolerance.of(tolerance).widest > 0 and result.missing and result.unexpected and _has_float(result):
        _match_within_tolerance(result, tolerance)
    return result


class _Number:
    """Stands for "some number" in a row's grouping key."""

    def __repr__(self) -> str:
        return "<number>"


_NUMBER = _Number()


def _has_float(result: RowMatch) -> bool:
    """Integers and text only ever match exactly: without a float the tolerance cannot help."""
    return any(
        type(cell) is float for rows in (result.missing, result.unexpected) for row in rows for cell in row
    )


def _grouping_key(row: Row) -> tuple[Any, ...]:
    return tuple(_NUMBER if is_tolerant_number(cell) else cell for cell in row)


def _match_within_tolerance(result: RowMatch, tolerance: float | Tolerance) -> None:
    groups: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for row in result.missing:
        groups[_grouping_key(row)].append(row)
    searchers = {key: _ToleranceSearch(rows, tolerance) for key, rows in groups.items()}
    budget = _Budget(TOLERANCE_BUDGET)
    still_unexpected: list[Row] = []
    for row in result.unexpected:
        searcher = searchers.get(_grouping_key(row))
        if searcher is None or not searcher.take_match(row, budget):
            still_unexpected.append(row)
    result.unexpected = still_unexpected
    still_missing = [row for searcher in searchers.values() for row in searcher.unused()]
    result.matched += len(result.missing) - len(still_missing)
    result.missing = _in_original_order(result.missing, still_missing)
    result.budget_exhausted = budget.exhausted


def _in_original_order(original: list[Row], remaining: list[Row]) -> list[Row]:
    left = Counter(remaining)
    ordered = []
    for row in original:
        if left[row] > 0:
            left[row] -= 1
            ordered.append(row)
    return ordered


class _Budget:
    def __init__(self, comparisons: int) -> None:
        self.left = comparisons

    @property
    def exhausted(self) -> bool:
        return self.left <= 0

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


class _ToleranceSearch:
    """Reference rows of one group, sorted on one numeric column for window lookups."""

    def __init__(self, rows: list[Row], tolerance: float | Tolerance) -> None:
        self.tolerance = Tolerance.of(tolerance)
        self.column = _most_distinct_numeric_column(rows)
        ordered = sorted(rows, key=self._key) if self.column is not None else list(rows)
        self.rows = ordered
        self.keys = [self._key(row) for row in ordered]
        self.used = [False] * len(ordered)

    def _key(self, row: Row) -> float:
        return float(row[self.column]) if self.column is not None else 0.0  # type: ignore[arg-type]

    def take_match(self, row: Row, budget: _Budget) -> bool:
        """Mark and report the first unused reference row close to ``row``."""
        if self.column is None:
            return False  # no numeric cell: only an exact match could do, and there was none
        center = self._key(row)
        # Over-approximates the tolerance window; rows_close decides.
        reach = 2 * self.tolerance.reach(center)
        index = bisect_left(self.keys, center - reach)
        while index < len(self.keys) and self.keys[index] <= center + reach:
            if not self.used[index]:
                if not budget.spend():
                    return False
                if rows_close(self.rows[index], row, self.tolerance):
                    self.used[index] = True
                    return True
            index += 1
        return False

    def unused(self) -> list[Row]:
        return [row for row, used in zip(self.rows, self.used, strict=True) if not used]


def _most_distinct_numeric_column(rows: list[Row]) -> int | None:
    best: int | None = None
    best_count = -1
    for column in range(len(rows[0])):
        if not is_tolerant_number(rows[0][column]):
            continue  # every row of a group has a number in the same places
        count = len({row[column] for row in rows})
        if count > best_count:
            best, best_count = column, count
    return best
