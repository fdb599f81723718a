"""Result-set comparison: multisets, order, columns, tolerance, NULLs, types, partial credit."""

from __future__ import annotations

import random
import time
from decimal import Decimal

import pytest

from assay.evaluators.sql._result_equality import CompareOptions, ResultSet, compare_results
from assay.evaluators.sql._values import normalize_row, normalize_value


def result(rows: list[tuple[object, ...]], columns: tuple[str, ...] | None = None) -> ResultSet:
    normalized = [normalize_row(row) for row in rows]
    width = len(columns) if columns else (len(rows[0]) if rows else None)
    return ResultSet(rows=normalized, columns=columns, width=width)


def compare(reference: ResultSet, generated: ResultSet, **options: object):
    return compare_results(reference, generated, CompareOptions(**options))  # type: ignore[arg-type]


def test_same_rows_in_any_order_match_when_order_is_not_compared() -> None:
    outcome = compare(result([(1, "a"), (2, "b")]), result([(2, "b"), (1, "a")]))
    assert outcome.match and outcome.f1 == 1.0


def test_duplicates_count_as_a_multiset() -> None:
    outcome = compare(result([(1,), (1,), (2,)]), result([(1,), (2,)]))
    assert not outcome.match
    assert outcome.matched_rows == 2
    assert outcome.precision == 1.0 and outcome.recall == pytest.approx(2 / 3)
    assert outcome.missing_rows == [(1,)]


def test_extra_duplicate_is_an_unexpected_row() -> None:
    outcome = compare(result([(1,), (2,)]), result([(1,), (1,), (2,)]))
    assert not outcome.match and outcome.unexpected_rows == [(1,)]
    assert outcome.precision == pytest.approx(2 / 3) and outcome.recall == 1.0


def test_nulls_equal_each_other_but_not_zero_or_empty_text() -> None:
    assert compare(result([(None, 1)]), result([(None, 1)])).match
    assert not compare(result([(None,)]), result([(0,)])).match
    assert not compare(result([(None,)]), result([("",)])).match


def test_numbers_match_across_types() -> None:
    reference = result([(Decimal("12.50"), Decimal("3"), True)])
    generated = result([(12.5, 3.0, 1)])
    assert compare(reference, generated).match


def test_float_tolerance_is_relative_and_configurable() -> None:
    reference = result([(0.1 + 0.2, 1_000_000.0)])
    close = result([(0.3, 1_000_000.0000001)])
    far = result([(0.3001, 1_000_000.0)])
    assert compare(reference, close).match
    assert not compare(reference, far).match
    assert compare(reference, far, tolerance=1e-3).match
    assert not compare(reference, close, tolerance=0.0).match


def test_large_integers_compare_exactly() -> None:
    big = 2**62
    assert not compare(result([(big,)]), result([(big + 1,)]), tolerance=0.1).match
    assert compare(result([(big,)]), result([(Decimal(big),)])).match


def test_nan_equals_nan() -> None:
    assert compare(result([(float("nan"),)]), result([(Decimal("NaN"),)])).match


def test_row_order_is_compared_only_when_asked() -> None:
    reference, generated = result([(1,), (2,), (3,)]), result([(1,), (3,), (2,)])
    assert compare(reference, generated).match
    ordered = compare(reference, generated, ordered=True)
    assert not ordered.match
    assert ordered.first_order_difference == 1
    assert ordered.f1 == 1.0  # the rows are all there: full partial credit
    assert compare(reference, result([(1,), (2,), (3,)]), ordered=True).match


def test_columns_in_another_order_match_by_default() -> None:
    reference = result([(1, "Ana", 3.5), (2, "Ben", 1.0)], ("id", "name", "score"))
    generated = result([("Ben", 1.0, 2), ("Ana", 3.5, 1)], ("n", "s", "i"))
    outcome = compare(reference, generated)
    assert outcome.match
    assert outcome.column_mapping == (2, 0, 1)


def test_positional_columns_must_line_up() -> None:
    reference = result([(1, "a")])
    swapped = result([("a", 1)])
    assert not compare(reference, swapped, column_matching="positional").match
    assert compare(reference, result([(1, "a")]), column_matching="positional").match


def test_by_name_aligns_columns_by_case_insensitive_name() -> None:
    reference = result([(1, "a")], ("id", "name"))
    assert compare(reference, result([("a", 1)], ("NAME", "ID")), column_matching="by_name").match
    renamed = compare(reference, result([(1, "a")], ("id", "label")), column_matching="by_name")
    assert not renamed.match
    assert "column names differ" in renamed.reason
    assert renamed.f1 == 1.0  # the rows themselves are right


def test_identical_columns_do_not_confuse_alignment() -> None:
    reference = result([(1, 1, "x"), (2, 2, "y")])
    generated = result([("x", 1, 1), ("y", 2, 2)])
    assert compare(reference, generated).match


def test_column_count_mismatch_is_no_match() -> None:
    outcome = compare(result([(1, "a")]), result([(1,)]))
    assert not outcome.match and "column count differs" in outcome.reason
    assert outcome.f1 == 0.0


def test_empty_results() -> None:
    assert compare(result([], ("a",)), result([], ("a",))).match
    outcome = compare(result([(1,)]), result([], ("a",)))
    assert not outcome.match and outcome.recall == 0.0 and outcome.precision == 0.0
    unknown_width = ResultSet(rows=[], columns=None, width=None)
    assert compare(unknown_width, result([], ("a", "b"))).match


def test_partial_credit_for_a_wrong_filter() -> None:
    reference = result([(i,) for i in range(10)])
    generated = result([(i,) for i in range(5, 15)])
    outcome = compare(reference, generated)
    assert outcome.precision == 0.5 and outcome.recall == 0.5 and outcome.f1 == 0.5


def test_diff_rows_are_bounded() -> None:
    outcome = compare(
        result([(i,) for i in range(100)]), result([(-i - 1,) for i in range(100)]), max_diff_rows=3
    )
    assert len(outcome.missing_rows) == 3 and len(outcome.unexpected_rows) == 3
    assert outcome.missing_rows == [(0,), (1,), (2,)]


def test_unexpected_rows_are_shown_in_the_generated_column_order() -> None:
    reference = result([(1, "a"), (2, "b")])
    generated = result([("a", 1), ("zzz", 9)])
    outcome = compare(reference, generated)
    assert outcome.column_mapping == (1, 0)
    assert outcome.unexpected_rows == [("zzz", 9)]


def test_temporal_and_other_values_normalize_to_text() -> None:
    import datetime as dt
    import uuid

    assert normalize_value(dt.date(2024, 1, 2)) == "2024-01-02"
    assert normalize_value(dt.datetime(2024, 1, 2, 3, 4, 5)) == "2024-01-02 03:04:05"
    identifier = uuid.uuid4()
    assert normalize_value(identifier) == str(identifier)
    assert normalize_value(memoryview(b"ab")) == b"ab"
    assert normalize_value([1, Decimal("2.5")]) == (1, 2.5)
    assert normalize_value({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'


def test_tolerance_matching_of_many_perturbed_rows_is_fast() -> None:
    rng = random.Random(3)
    reference_rows = [(i % 50, rng.uniform(0, 1000)) for i in range(20_000)]
    generated_rows = [(k, v * (1 + 1e-9)) for k, v in reversed(reference_rows)]
    # this thread's CPU time (~0.2 s; pairing every row with every row: minutes): wall
    # time is the machine's load too (3.6-4.3 s in 4 of 10 runs at load ~80)
    started = time.thread_time()
    outcome = compare(result(reference_rows), result(generated_rows))
    assert outcome.match
    assert time.thread_time() - started < 3.0


def test_wide_results_are_aligned_without_trying_every_permutation() -> None:
    rng = random.Random(5)
    width = 8
    reference_rows = [
        tuple([i, *(rng.uniform(0, 100) for _ in range(width - 2)), f"n{i % 300}"]) for i in range(10_000)
    ]
    wrong_rows = [
        tuple([i, *(rng.uniform(0, 100) for _ in range(width - 2)), f"n{i % 300}"]) for i in range(10_000)
    ]
    reordered = [tuple(reversed(row)) for row in reference_rows]
    started = time.thread_time()  # CPU time, as above
    assert compare(result(reference_rows), result(reordered)).column_mapping == tuple(reversed(range(width)))
    wrong = compare(result(reference_rows), result(wrong_rows))
    assert not wrong.match and wrong.f1 == 0.0
    assert time.thread_time() - started < 30.0  # 8! = 40,320 alignments would take hours


def test_tolerance_widens_the_coarse_alignment_search() -> None:
    reference = result([(1, 10.123), (2, 20.456)])
    generated = result([(20.46, 2), (10.12, 1)])
    assert not compare(reference, generated).match
    loose = compare(reference, generated, tolerance=1e-3)
    assert loose.match and loose.column_mapping == (1, 0)
