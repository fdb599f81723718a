"""Built-in evaluators, one family per module, imported lazily (each family has its own extra)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time each family loads on first use
    from assay.evaluators.agents import TrajectoryJudgeEvaluator, TrajectoryMatchEvaluator
    from assay.evaluators.agents.tool_code import ToolCodeEvaluator
    from assay.evaluators.api import APICallEvaluator
    from assay.evaluators.code import CodeCorrectnessEvaluator, CodeStyleEvaluator, pass_at_k
    from assay.evaluators.code.checkstyle import CheckstyleEvaluator
    from assay.evaluators.code.cppcheck import CppcheckEvaluator
    from assay.evaluators.code.go_vet import GoVetEvaluator
    from assay.evaluators.code.quality import BanditSecurityEvaluator, RuffLintEvaluator
    from assay.evaluators.composite import CompositeEvaluator
    from assay.evaluators.data import DataTransformationEvaluator
    from assay.evaluators.judge import (
        CriteriaEvaluator,
        LabeledCriteriaEvaluator,
        LLMFeedbackEvaluator,
        LlmFeedbackEvaluator,
        QAEvaluator,
        SelfConsistency,
    )
    from assay.evaluators.judge.pairwise import ComparisonEvaluator
    from assay.evaluators.patches import RepositoryPatchEvaluator
    from assay.evaluators.programs import CheckerProgram, ProgramEvaluator
    from assay.evaluators.sql import SQLExecutionEvaluator, SQLValidityEvaluator
    from assay.evaluators.text.embedding import EmbeddingDistanceEvaluator
    from assay.evaluators.text.json import JsonEqualityEvaluator, JsonValidityEvaluator
    from assay.evaluators.text.reference_text import BleuEvaluator, RougeEvaluator
    from assay.evaluators.text.string import (
        ExactMatchEvaluator,
        RegexEvaluator,
        StringDistanceEvaluator,
    )
    from assay.evaluators.unit_tests import UnitTestGenerationEvaluator

_HOMES = {
    "CodeCorrectnessEvaluator": "assay.evaluators.code",
    "pass_at_k": "assay.evaluators.code",
    "RuffLintEvaluator": "assay.evaluators.code.quality",
    "BanditSecurityEvaluator": "assay.evaluators.code.quality",
    "CodeStyleEvaluator": "assay.evaluators.code",
    "GoVetEvaluator": "assay.evaluators.code.go_vet",
    "CppcheckEvaluator": "assay.evaluators.code.cppcheck",
    "CheckstyleEvaluator": "assay.evaluators.code.checkstyle",
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
    "LLMFeedbackEvaluator": "assay.evaluators.judge",
    "LlmFeedbackEvaluator": "assay.evaluators.judge",
    "QAEvaluator": "assay.evaluators.judge",
    "SelfConsistency": "assay.evaluators.judge",
    "ComparisonEvaluator": "assay.evaluators.judge.pairwise",
    "CompositeEvaluator": "assay.evaluators.composite",
    "TrajectoryMatchEvaluator": "assay.evaluators.agents",
    "TrajectoryJudgeEvaluator": "assay.evaluators.agents",
    "UnitTestGenerationEvaluator": "assay.evaluators.unit_tests",
    "RepositoryPatchEvaluator": "assay.evaluators.patches",
    "DataTransformationEvaluator": "assay.evaluators.data",
    "APICallEvaluator": "assay.evaluators.api",
    "ToolCodeEvaluator": "assay.evaluators.agents",
    "ProgramEvaluator": "assay.evaluators.programs",
    "CheckerProgram": "assay.evaluators.programs",
}

__all__ = [
    "APICallEvaluator",
    "BanditSecurityEvaluator",
    "BleuEvaluator",
    "CheckerProgram",
    "CheckstyleEvaluator",
    "CodeCorrectnessEvaluator",
    "CodeStyleEvaluator",
    "ComparisonEvaluator",
    "CompositeEvaluator",
    "CppcheckEvaluator",
    "CriteriaEvaluator",
    "DataTransformationEvaluator",
    "EmbeddingDistanceEvaluator",
    "ExactMatchEvaluator",
    "GoVetEvaluator",
    "JsonEqualityEvaluator",
    "JsonValidityEvaluator",
    "LabeledCriteriaEvaluator",
    "LLMFeedbackEvaluator",
    "LlmFeedbackEvaluator",
    "ProgramEvaluator",
    "QAEvaluator",
    "RegexEvaluator",
    "RepositoryPatchEvaluator",
    "RougeEvaluator",
    "RuffLintEvaluator",
    "SelfConsistency",
    "SQLExecutionEvaluator",
    "SQLValidityEvaluator",
    "StringDistanceEvaluator",
    "ToolCodeEvaluator",
    "TrajectoryJudgeEvaluator",
    "TrajectoryMatchEvaluator",
    "UnitTestGenerationEvaluator",
    "pass_at_k",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.evaluators' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
