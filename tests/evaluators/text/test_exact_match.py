"""ExactMatchEvaluator: normalization options and non-string values."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluators.text.string import ExactMatchEvaluator


@pytest.mark.parametrize(
    ("options", "output", "reference", "score"),
    [
        ({}, "Paris", "Paris", 1.0),
        ({}, "Paris\n", "Paris", 1.0),  # ends are stripped by default
        ({}, "paris", "Paris", 0.0),
        ({"ignore_case": True}, "PARIS", "paris", 1.0),
        ({"ignore_case": True}, "STRASSE", "straße", 1.0),  # case folding, not lower()
        ({"whitespace": "exact"}, "Paris\n", "Paris", 0.0),
        ({}, "New  York", "New York", 0.0),
        ({"whitespace": "collapse"}, " New \t York ", "New York", 1.0),
        ({"whitespace": "ignore"}, "N e w York", "NewYork", 1.0),
        ({}, "Paris.", "Paris", 0.0),
        ({"ignore_punctuation": True}, "Paris.", "Paris!", 1.0),
        ({}, "cafe\u0301", "café", 1.0),  # canonically equal Unicode is equal
        ({}, "", "", 1.0),
        ({}, "", "x", 0.0),
    ],
)
def test_string_normalization(
    options: dict[str, Any], output: str, reference: str, score: float, run_of: Any, example_of: Any
) -> None:
    result = ExactMatchEvaluator(**options).evaluate(run_of(output), example_of(reference))
    assert result.key == "exact_match"
    assert result.score == score


@pytest.mark.parametrize(
    ("output", "reference", "score"),
    [
        (42, 42, 1.0),
        (1, 1.0, 1.0),
        (True, 1, 0.0),  # a boolean answer is not the number 1
        ([1, 2], [1, 2], 1.0),
        ({"a": 1}, {"a": 1}, 1.0),
        ({"a": 1}, {"a": 2}, 0.0),
        (42, "42", 1.0),  # one side text: compared as text
        (None, "", 1.0),  # no output is empty text
    ],
)
def test_non_string_values(output: Any, reference: Any, score: float, run_of: Any, example_of: Any) -> None:
    assert ExactMatchEvaluator().evaluate(run_of(output), example_of(reference)).score == score


def test_a_list_of_strings_lists_acceptable_answers(run_of: Any, example_of: Any) -> None:
    aliases = example_of(["New York City", "NYC", "New York"])
    evaluator = ExactMatchEvaluator(ignore_case=True)
    assert evaluator.evaluate(run_of("nyc"), aliases).score == 1.0
    assert evaluator.evaluate(run_of("Boston"), aliases).score == 0.0
    assert evaluator.evaluate(run_of(["NYC"]), example_of(["NYC"])).score == 1.0  # lists as values


def test_bad_whitespace_option_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="whitespace=.*'tabs'"):
        ExactMatchEvaluator(whitespace="tabs")  # type: ignore[arg-type]


def test_custom_name_is_the_key(run_of: Any, example_of: Any) -> None:
    result = ExactMatchEvaluator(name="answer_exact").evaluate(run_of("a"), example_of("a"))
    assert result.key == "answer_exact"
