"""Execution accuracy: do two result sets hold the same rows?

Rows are compared as multisets (duplicates count); order only when asked. Column
names are ignored by default and columns may come in any order, as in the
Spider/BIRD execution-accuracy measure: the generated columns are aligned to the
reference columns by content. Partial credit is row-level precision, recall and F1.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Literal

from assay.evaluators.sql._rowmatch import RowMatch, match_rows
from assay.evaluators.sql._values import Cell, Row, Tolerance, is_tolerant_number, rows_close

ColumnMatching = Literal["any_order", "positional", "by_name"]
COLUMN_MATCHINGS: tuple[str, ...] = ("any_order", "positional", "by_name")

# Column alignments tried before settling for the best partial match.
MAX_ALIGNMENTS = 24
# A column pair sharing fewer values than this share of the rows cannot belong to a full
# match; the margin absorbs values that round differently in the coarse comparison.
_PLAUSIBLE_SHARE = 0.9


@dataclass(frozen=True)
class ResultSet:
    """Normalized rows and, when known, column names (expected rows may have none)."""

    rows: list[Row]
    columns: tuple[str, ...] | None = None
    width: int | None = None


@dataclass(frozen=True)
class CompareOptions:
    ordered: bool = False
    tolerance: float | Tolerance = 1e-6  # a float is both relative and absolute
    column_matching: ColumnMatching = "any_order"
    max_diff_rows: int = 10


@dataclass
class Comparison:
    match: bool
    reason: str
    matched_rows: int = 0
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    # For each reference column, the generated column aligned with it.
    column_mapping: tuple[int, ...] | None = None
    missing_rows: list[Row] = field(default_factory=list)
    unexpected_rows: list[Row] = field(default_factory=list)
    first_order_difference: int | None = None
    matching_budget_exhausted: bool = False


@dataclass
class _Attempt:
    mapping: tuple[int, ...]
    rows: RowMatch
    order_difference: int | None

    @property
    def rank(self) -> tuple[bool, int]:
        return (self.order_difference is None, self.rows.matched)


def compare_results(reference: ResultSet, generated: ResultSet, options: CompareOptions) -> Comparison:
    """Compare ``generated`` against ``reference`` under ``options``."""
    width = generated.width if generated.width is not None else _width_of(generated.rows)
    reference_width = reference.width if reference.width is not None else _width_of(reference.rows)
    n_ref, n_gen = len(reference.rows), len(generated.rows)
    if reference_width is not None and width is not None and reference_width != width:
        return _finish(
            Comparison(
                match=False,
                reason=f"column count differs: reference has {reference_width}, generated has {width}",
                missing_rows=reference.rows[: options.max_diff_rows],
                unexpected_rows=generated.rows[: options.max_diff_rows],
            ),
            n_ref,
            n_gen,
        )
    width = width if width is not None else reference_width or 0
    names_mapping, names_problem = _names_alignment(reference, generated, options, width)
    best = _best_attempt(
        reference.rows,
        generated.rows,
        _alignments(reference, generated, options, width, names_mapping),
        options,
    )
    return _finish(_verdict(best, names_problem, n_ref, n_gen, options), n_ref, n_gen)


def _width_of(rows: list[Row]) -> int | None:
    return len(rows[0]) if rows else None


def _names_alignment(
    reference: ResultSet, generated: ResultSet, options: CompareOptions, width: int
) -> tuple[tuple[int, ...] | None, str | None]:
    """Under ``by_name``: the alignment of equal names, or why there is none."""
    if options.column_matching != "by_name":
        return None, None
    if reference.columns is None or generated.columns is None:
        return None, "column names are unknown for the reference (give expected_columns)"
    mapping = _mapping_by_name(reference.columns, generated.columns)
    if mapping is None:
        return None, (
            f"column names differ: reference {list(reference.columns)}, generated {list(generated.columns)}"
        )
    return mapping, None


def _mapping_by_name(reference: tuple[str, ...], generated: tuple[str, ...]) -> tuple[int, ...] | None:
    positions: dict[str, list[int]] = {}
    for index, name in enumerate(generated):
        positions.setdefault(name.lower(), []).append(index)
    mapping = []
    for name in reference:
        candidates = positions.get(name.lower())
        if not candidates:
            return None
        mapping.append(candidates.pop(0))
    return tuple(mapping) if len(mapping) == len(generated) else None


def _alignments(
    reference: ResultSet,
    generated: ResultSet,
    options: CompareOptions,
    width: int,
    names_mapping: tuple[int, ...] | None,
) -> Iterator[tuple[int, ...]]:
    identity = tuple(range(width))
    if names_mapping is not None:
        yield names_mapping
        return
    yield identity
    if options.column_matching == "positional" or width < 2:
        return
    # any_order, or by_name without an alignment (searched only for partial credit)
    similarity = _column_similarity(reference.rows, generated.rows, width, options.tolerance)
    best = next(_permutations(similarity))
    if best != identity:
        yield best  # the most plausible alignment: enough for partial credit
    rows = len(reference.rows)
    if rows == 0 or rows != len(generated.rows):
        return  # a full match is impossible: no need to search further
    tried = {identity, best}
    plausible = _permutations(similarity, floor=_PLAUSIBLE_SHARE * rows)
    for mapping in islice(plausible, MAX_ALIGNMENTS):
        if mapping not in tried:
            tried.add(mapping)
            yield mapping


def _best_attempt(
    reference: list[Row],
    generated: list[Row],
    mappings: Iterator[tuple[int, ...]],
    options: CompareOptions,
) -> _Attempt:
    best: _Attempt | None = None
    for mapping in mappings:
        aligned = _apply(mapping, generated)
        rows = match_rows(reference, aligned, options.tolerance)
        order = _first_order_difference(reference, aligned, options.tolerance) if options.ordered else None
        attempt = _Attempt(mapping, rows, order)
        if best is None or attempt.rank > best.rank:
            best = attempt
        if _perfect(attempt, len(reference), len(generated)):
            break
    assert best is not None, "at least one alignment is always tried"
    return best


def _perfect(attempt: _Attempt, n_ref: int, n_gen: int) -> bool:
    return attempt.order_difference is None and attempt.rows.matched == n_ref == n_gen


def _apply(mapping: tuple[int, ...], rows: list[Row]) -> list[Row]:
    if mapping == tuple(range(len(mapping))):
        return rows
    return [tuple(row[index] for index in mapping) for row in rows]


def _first_order_difference(
    reference: list[Row], generated: list[Row], tolerance: float | Tolerance
) -> int | None:
    for index, (expected, actual) in enumerate(zip(reference, generated, strict=False)):
        if not rows_close(expected, actual, tolerance):
            return index
    if len(reference) != len(generated):
        return min(len(reference), len(generated))
    return None


def _verdict(
    best: _Attempt, names_problem: str | None, n_ref: int, n_gen: int, options: CompareOptions
) -> Comparison:
    rows = best.rows
    same_rows = rows.matched == n_ref == n_gen
    comparison = Comparison(
        match=False,
        reason="",
        matched_rows=rows.matched,
        column_mapping=best.mapping,
        missing_rows=rows.missing[: options.max_diff_rows],
        unexpected_rows=[_unapply(best.mapping, row) for row in rows.unexpected[: options.max_diff_rows]],
        matching_budget_exhausted=rows.budget_exhausted,
    )
    if names_problem is not None:
        comparison.reason = names_problem
    elif not same_rows:
        comparison.reason = (
            f"rows differ: {len(rows.missing)} expected row(s) missing, "
            f"{len(rows.unexpected)} unexpected row(s)"
        )
    elif options.ordered and best.order_difference is not None:
        comparison.first_order_difference = best.order_difference
        comparison.reason = (
            f"same rows in a different order (first difference at row {best.order_difference})"
        )
    else:
        comparison.match = True
        order = " in the same order" if options.ordered else ""
        comparison.reason = f"result sets match ({n_ref} row(s){order})"
    return comparison


def _unapply(mapping: tuple[int, ...], row: Row) -> Row:
    """A row aligned to the reference, put back in the generated query's column order."""
    original: list[Cell] = [None] * len(mapping)
    for reference_index, generated_index in enumerate(mapping):
        original[generated_index] = row[reference_index]
    return tuple(original)


def _finish(comparison: Comparison, n_ref: int, n_gen: int) -> Comparison:
    matched = comparison.matched_rows
    precision = matched / n_gen if n_gen else (1.0 if n_ref == 0 else 0.0)
    recall = matched / n_ref if n_ref else (1.0 if n_gen == 0 else 0.0)
    comparison.precision = precision
    comparison.recall = recall
    comparison.f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return comparison


def _permutations(similarity: list[list[int]], floor: float | None = None) -> Iterator[tuple[int, ...]]:
    """Column alignments, most plausible first: columns sharing more values pair up first.

    With ``floor``, only pairs sharing at least that many values are considered.
    """
    width = len(similarity)
    preferences = [
        [g for g in _preference(similarity[r], r) if floor is None or similarity[r][g] >= floor]
        for r in range(width)
    ]

    def extend(prefix: list[int], used: set[int]) -> Iterator[tuple[int, ...]]:
        if len(prefix) == width:
            yield tuple(prefix)
            return
        for candidate in preferences[len(prefix)]:
            if candidate not in used:
                used.add(candidate)
                prefix.append(candidate)
                yield from extend(prefix, used)
                prefix.pop()
                used.discard(candidate)

    return extend([], set())


def _preference(similarity: list[int], position: int) -> list[int]:
    """Generated columns for one reference column: most shared values first, then nearest."""
    return sorted(range(len(similarity)), key=lambda g: (-similarity[g], abs(g - position)))


def _column_similarity(
    reference: list[Row], generated: list[Row], width: int, tolerance: float | Tolerance
) -> list[list[int]]:
    """For each (reference, generated) column pair, how many values they share (coarsely)."""
    digits = _significant_digits(Tolerance.of(tolerance).widest)
    reference_profiles = [Counter(_loose(row[c], digits) for row in reference) for c in range(width)]
    generated_profiles = [Counter(_loose(row[c], digits) for row in generated) for c in range(width)]
    return [[sum((ref & gen).values()) for gen in generated_profiles] for ref in reference_profiles]


def _significant_digits(tolerance: float) -> int:
    """Digits that survive the tolerance: values equal within it mostly round alike."""
    if tolerance <= 0:
        return 15
    return max(1, min(15, math.floor(-math.log10(tolerance)) - 1))


def _loose(cell: Cell, digits: int) -> Cell:
    """A coarse form of a cell, only to rank alignments (the verdict uses exact values)."""
    if is_tolerant_number(cell):
        return float(f"{float(cell):.{digits}g}")  # type: ignore[arg-type]
    return cell
