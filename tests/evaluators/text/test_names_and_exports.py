"""Every evaluator of this family is reachable by its string name and from the packages."""

from __future__ import annotations

import pytest

import assay.evaluators
import assay.scorers
from assay.evaluation._names import resolve_evaluator_name
from assay.evaluation.evaluator import BaseEvaluator

NAMES = {
    "exact_match": "exact_match",
    "regex_match": "regex_match",
    "string_distance": "string_distance",
    "json_validity": "json_validity",
    "json_equality": "json_equality",
    "embedding_distance": "embedding_distance",
    "bleu": "bleu",
    "rouge": "rouge",
    "completeness": "completeness",
    "content_similarity": "content_similarity",
    "keyword_coverage": "keyword_coverage",
    "textual_difference": "textual_difference",
    "tone": "tone",
}


@pytest.mark.parametrize(("name", "key"), NAMES.items())
def test_each_name_builds_an_evaluator_with_no_arguments(name: str, key: str) -> None:
    evaluator = resolve_evaluator_name(name)
    assert isinstance(evaluator, BaseEvaluator)
    assert evaluator.name == key


@pytest.mark.parametrize(
    "name",
    [
        "ExactMatchEvaluator",
        "RegexEvaluator",
        "StringDistanceEvaluator",
        "JsonValidityEvaluator",
        "JsonEqualityEvaluator",
        "EmbeddingDistanceEvaluator",
        "BleuEvaluator",
        "RougeEvaluator",
    ],
)
def test_lazy_exports_of_assay_evaluators(name: str) -> None:
    cls = getattr(assay.evaluators, name)
    assert issubclass(cls, BaseEvaluator)


@pytest.mark.parametrize(
    "name",
    [
        "create_completeness_scorer",
        "create_content_similarity_scorer",
        "create_keyword_coverage_scorer",
        "create_textual_difference_scorer",
        "create_tone_scorer",
    ],
)
def test_lazy_exports_of_assay_scorers(name: str) -> None:
    scorer = getattr(assay.scorers, name)()
    assert isinstance(scorer, assay.scorers.Scorer)
