"""Built-in evaluators, one family per module, imported lazily (each family has its own extra)."""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "CodeCorrectnessEvaluator": "assay.evaluators.code",
    "pass_at_k": "assay.evaluators.code",
    "RuffLintEvaluator": "assay.evaluators.code.quality",
    "BanditSecurityEvaluator": "assay.evaluators.code.quality",
    "SQLExecutionEvaluator": "assay.evaluators.sql",
    "SQLValidityEvaluator": "assay.evaluators.sql",
    "ExactMatchEvaluator": "assay.evaluators.text.string",
    "RegexEvaluator": "assay.evaluators.text.string",
    "StringDistanceEvaluator": "assay.evaluators.text.string",
    "JsonValidityEvaluator": "assay.evaluators.text.json",
    "JsonEqualityEvaluator": "assay.evaluators.text.json",
    "EmbeddingDistanceEvaluator": "assay.evaluators.text.embedding",
    "BleuEvaluator": "assay.evaluators.text.reference_text",
    "RougeEvaluator": "assay.evaluators.text.reference_text",
    "CriteriaEvaluator": "assay.evaluators.judge",
    "LabeledCriteriaEvaluator": "assay.evaluators.judge",
    "LlmFeedbackEvaluator": "assay.evaluators.judge",
    "QAEvaluator": "assay.evaluators.judge",
    "ComparisonEvaluator": "assay.evaluators.judge.pairwise",
    "CompositeEvaluator": "assay.evaluators.composite",
    "TrajectoryMatchEvaluator": "assay.evaluators.agents",
    "TrajectoryJudgeEvaluator": "assay.evaluators.agents",
    "UnitTestGenerationEvaluator": "assay.evaluators.unit_tests",
    "DataTransformationEvaluator": "assay.evaluators.data",
    "APICallEvaluator": "assay.evaluators.api",
    "ToolCodeEvaluator": "assay.evaluators.agents",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.evaluators' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
