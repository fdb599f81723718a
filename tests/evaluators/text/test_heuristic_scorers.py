"""Content similarity, keyword coverage, textual difference and tone scorers."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluation._names import resolve_evaluator_name
from assay.schemas import Example, Run
from assay.scorers import (
    create_content_similarity_scorer,
    create_keyword_coverage_scorer,
    create_textual_difference_scorer,
    create_tone_scorer,
)
from assay.scorers.heuristic import dice_bigrams


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("night", "nacht", 0.25),  # bigrams: ni ig gh ht / na ac ch ht -> 2*1/8
        ("context", "contact", 0.5),
        ("aaaa", "aa", 2 * 1 / 4),  # shared bigrams count with multiplicity
        ("same", "same", 1.0),
        ("", "", 1.0),
        ("a", "ab", 0.0),
    ],
)
def test_dice_bigrams(first: str, second: str, expected: float) -> None:
    assert dice_bigrams(first, second) == pytest.approx(expected)


def test_content_similarity_options() -> None:
    default = create_content_similarity_scorer().run(input="Hello   World", output="hello world")
    assert default.score == 1.0
    assert default.preprocess_step_result == {
        "processed_input": "hello world",
        "processed_output": "hello world",
    }
    strict_case = create_content_similarity_scorer(ignore_case=False).run(input="ABC", output="abc")
    assert strict_case.score == 0.0
    spaced = create_content_similarity_scorer(ignore_whitespace=False).run(input="a b c", output="abc")
    assert spaced.score == 0.0  # bigrams now include the spaces
    assert create_content_similarity_scorer().run(input="a b c", output="abc").score == 1.0


def test_keyword_coverage() -> None:
    result = create_keyword_coverage_scorer().run(
        input="Benefits of remote work for employees in 2024",
        output="Working remotely benefits each employee.",
    )
    assert result.preprocess_step_result is not None and result.analyze_step_result is not None
    assert result.preprocess_step_result["reference_keywords"] == ["benefit", "remote", "work", "employee"]
    assert result.analyze_step_result == {
        "total_keywords": 4,
        "matched_keywords": 3,
        "missing_keywords": ["remote"],
    }
    assert result.score == pytest.approx(0.75)  # exact lemmas: "remotely" is not "remote"
    assert result.reason == "3 of 4 keywords found; missing: remote"


def test_keyword_coverage_without_keywords_is_one_and_chinese_works() -> None:
    assert create_keyword_coverage_scorer().run(input="what is it?", output="").score == 1.0
    chinese = create_keyword_coverage_scorer().run(input="远程办公的好处", output="远程办公有很多好处")
    assert chinese.score == 1.0


@pytest.mark.parametrize(
    ("first", "second", "ratio", "changes"),
    [
        ("the quick brown fox", "the quick brown fox", 1.0, 0),
        ("the quick brown fox", "the quick red fox", 2 * 15 / (19 + 17), 1),
        ("abc", "", 0.0, 1),
        ("", "", 1.0, 0),
        ("one two three four", "one 2 three 4 five", None, 2),
    ],
)
def test_textual_difference(first: str, second: str, ratio: float | None, changes: int) -> None:
    result = create_textual_difference_scorer().run(input=first, output=second)
    step = result.preprocess_step_result
    assert step is not None
    if ratio is not None:
        assert result.score == pytest.approx(ratio)
    assert step["ratio"] == result.score
    assert step["changes"] == changes
    longest = max(len(first), len(second))
    assert step["length_diff"] == pytest.approx(abs(len(first) - len(second)) / longest if longest else 0)
    assert step["confidence"] == pytest.approx(1 - step["length_diff"])


def test_tone_against_a_reference() -> None:
    scorer = create_tone_scorer(reference_tone="Friendly, warm and positive. Great to help!")
    warm = scorer.run(output="Happy to help, this is a great question!")
    cold = scorer.run(output="This is a terrible, awful, useless question and I hate it.")
    assert warm.score is not None and cold.score is not None
    assert warm.score > 0.85 > 0.4 > cold.score
    step = cold.preprocess_step_result
    assert step is not None
    assert step["response_sentiment"] < 0 < step["reference_sentiment"]
    assert step["difference"] == pytest.approx(step["reference_sentiment"] - step["response_sentiment"])


def test_tone_stability_without_a_reference() -> None:
    scorer = create_tone_scorer()
    steady = scorer.run(output="I love this. It is wonderful. Great work!")
    swinging = scorer.run(
        output="I love this! This is awful and terrible! Wonderful, amazing! Horrible, hateful."
    )
    assert steady.score is not None and swinging.score is not None
    assert steady.score > 0.95 > swinging.score
    step = swinging.preprocess_step_result
    assert step is not None and step["sentiment_variance"] > 0.3
    neutral = scorer.run(output="The meeting is at three.")
    assert neutral.score == 1.0 and neutral.preprocess_step_result == {
        "avg_sentiment": 0.0,
        "sentiment_variance": 0.0,
    }


@pytest.mark.parametrize("name", ["content_similarity", "keyword_coverage", "textual_difference", "tone"])
def test_scorers_resolve_by_name_and_work_as_evaluators(name: str) -> None:
    scorer = resolve_evaluator_name(name)
    result = scorer.evaluate(
        Run(outputs={"output": "Remote work helps employees."}),
        Example(inputs={"question": "Does remote work help employees?"}),
    )
    assert result.key == name
    assert result.error is None and result.score is not None and 0.0 <= result.score <= 1.0
    assert "preprocess_step_result" in result.metadata


def test_named_scorers_keep_their_name(**_: Any) -> None:
    assert create_tone_scorer(name="politeness").name == "politeness"
