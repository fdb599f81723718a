"""StringDistanceEvaluator: every metric, normalized and raw, on rapidfuzz."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluators.text.string import StringDistanceEvaluator


@pytest.mark.parametrize(
    ("distance", "raw", "normalized"),
    [
        ("levenshtein", 3.0, 3 / 7),  # kitten -> sitting: 3 edits, longer has 7 letters
        ("damerau_levenshtein", 3.0, 3 / 7),
        ("indel", 5.0, 5 / 13),  # insertions + deletions over the summed length
        ("hamming", 3.0, 3 / 7),  # the shorter is padded
    ],
)
def test_edit_distances(distance: Any, raw: float, normalized: float, run_of: Any, example_of: Any) -> None:
    run, example = run_of("kitten"), example_of("sitting")
    scaled = StringDistanceEvaluator(distance).evaluate(run, example)
    assert scaled.key == "string_distance"
    assert scaled.score == pytest.approx(normalized)
    assert scaled.metadata == {"distance": distance, "similarity": pytest.approx(1 - normalized)}
    counted = StringDistanceEvaluator(distance, normalize_score=False).evaluate(run, example)
    assert counted.score == raw


def test_damerau_counts_a_transposition_once(run_of: Any, example_of: Any) -> None:
    run, example = run_of("abcd"), example_of("acbd")
    assert StringDistanceEvaluator("levenshtein", False).evaluate(run, example).score == 2.0
    assert StringDistanceEvaluator("damerau_levenshtein", False).evaluate(run, example).score == 1.0


@pytest.mark.parametrize(("distance", "expected"), [("jaro", 1 - 0.9444), ("jaro_winkler", 1 - 0.9611)])
def test_jaro_family_is_one_minus_similarity(
    distance: Any, expected: float, run_of: Any, example_of: Any
) -> None:
    result = StringDistanceEvaluator(distance).evaluate(run_of("MARTHA"), example_of("MARHTA"))
    assert result.score == pytest.approx(expected, abs=1e-4)


def test_identical_and_empty_strings(run_of: Any, example_of: Any) -> None:
    evaluator = StringDistanceEvaluator()
    assert evaluator.evaluate(run_of("same"), example_of("same")).score == 0.0
    assert evaluator.evaluate(run_of(""), example_of("")).score == 0.0
    assert evaluator.evaluate(run_of(""), example_of("abc")).score == 1.0


def test_ignore_case_and_non_string_outputs(run_of: Any, example_of: Any) -> None:
    assert StringDistanceEvaluator(ignore_case=True).evaluate(run_of("ABC"), example_of("abc")).score == 0.0
    assert StringDistanceEvaluator().evaluate(run_of("ABC"), example_of("abc")).score == 1.0
    assert (
        StringDistanceEvaluator(normalize_score=False).evaluate(run_of(123), example_of("124")).score == 1.0
    )


def test_unknown_distance_fails_at_construction() -> None:
    with pytest.raises(ValueError, match=r"distance='cosine'\) is not supported; choose one of: levenshtein"):
        StringDistanceEvaluator("cosine")  # type: ignore[arg-type]
