"""Built-in evaluators, one family per module, imported lazily (each family has its own extra)."""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "CodeCorrectnessEvaluator": "assay.evaluators.code",
    "pass_at_k": "assay.evaluators.code",
    "RuffLintEvaluator": "assay.evaluators.code_quality",
    "BanditSecurityEvaluator": "assay.evaluators.code_quality",
    "SQLExecutionEvaluator": "assay.evaluators.sql",
    "SQLValidityEvaluator": "assay.evaluators.sql",
    "ExactMatchEvaluator": "assay.evaluators.string",
    "RegexEvaluator": "assay.evaluators.string",
    "StringDistanceEvaluator": "assay.evaluators.string",
    "JsonValidityEvaluator": "assay.evaluators.json",
    "JsonEqualityEvaluator": "assay.evaluators.json",
    "EmbeddingDistanceEvaluator": "assay.evaluators.embedding",
    "BleuEvaluator": "assay.evaluators.reference_text",
    "RougeEvaluator": "assay.evaluators.reference_text",
    "CriteriaEvaluator": "assay.evaluators.judge",
    "LabeledCriteriaEvaluator": "assay.evaluators.judge",
    "LlmFeedbackEvaluator": "assay.evaluators.judge",
    "QAEvaluator": "assay.evaluators.judge",
    "ComparisonEvaluator": "assay.evaluators.comparison",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.evaluators' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
