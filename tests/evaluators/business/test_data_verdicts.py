"""Honest data outputs scored right: an integral CSV cell in a float column, and a
relative tolerance that is not also an absolute one (and the reverse)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from assay.evaluators import DataTransformationEvaluator
from assay.evaluators.data._files import expected_table, parse_output
from assay.evaluators.data._table_equality import compare_tables


def verdict(
    csv: str, expected: list[dict[str, Any]], schema: dict[str, str] | None = None, **options: Any
) -> bool:
    evaluator = DataTransformationEvaluator(**options)
    table = parse_output(csv.encode(), ".csv")
    return compare_tables(
        expected_table(expected, "expected"), table, replace(evaluator.options, schema=schema)
    ).match


def test_an_integral_csv_cell_is_a_float() -> None:
    assert verdict(
        "item,price\na,832\nb,1.5\n",
        [{"item": "a", "price": 832.0}, {"item": "b", "price": 1.5}],
        {"price": "float"},
    )


def test_a_string_is_still_not_a_float() -> None:
    assert not verdict("item,price\na,n/a\n", [{"item": "a", "price": "n/a"}], {"price": "float"})


@pytest.mark.parametrize(
    ("actual", "wanted", "options", "matches"),
    [
        ("1000.5", 1000.0, {"rel_tol": 1e-3, "abs_tol": 0.0}, True),  # 0.05% of the magnitude
        ("1000.5", 1000.0, {"rel_tol": 0.0, "abs_tol": 0.1}, False),  # 0.5 apart
        ("0.0000001", 0.0, {"rel_tol": 1e-6, "abs_tol": 0.0}, False),  # relative to 0 is exact
        ("0.0000001", 0.0, {"rel_tol": 0.0, "abs_tol": 1e-6}, True),
        ("0.0000001", 0.0, {"tolerance": 1e-6}, True),  # the older spelling sets both
        ("1000.5", 1000.0, {"tolerance": 1e-6}, False),
    ],
)
def test_relative_and_absolute_tolerances_are_separate(
    actual: str, wanted: float, options: dict[str, Any], matches: bool
) -> None:
    assert verdict(f"x\n{actual}\n", [{"x": wanted}], **options) is matches


def test_bad_tolerances_are_refused() -> None:
    with pytest.raises(ValueError, match="rel_tol and abs_tol >= 0"):
        DataTransformationEvaluator(abs_tol=-1)
