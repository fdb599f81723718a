"""String names users may give instead of evaluator objects (``evaluators=["exact_match"]``).

Each name maps to ``"module:factory"``; the factory is called with no arguments.
An explicit table, not a registry that modules write into at import time.
"""

from __future__ import annotations

import importlib
from typing import Any

from assay.errors import UnknownEvaluatorNameError

EVALUATOR_NAMES: dict[str, str] = {
    # heuristic (no model)
    "exact_match": "assay.evaluators.text.string:ExactMatchEvaluator",
    "regex_match": "assay.evaluators.text.string:RegexEvaluator",
    "string_distance": "assay.evaluators.text.string:StringDistanceEvaluator",
    "json_validity": "assay.evaluators.text.json:JsonValidityEvaluator",
    "json_equality": "assay.evaluators.text.json:JsonEqualityEvaluator",
    "embedding_distance": "assay.evaluators.text.embedding:EmbeddingDistanceEvaluator",
    "bleu": "assay.evaluators.text.reference_text:BleuEvaluator",
    "rouge": "assay.evaluators.text.reference_text:RougeEvaluator",
    "completeness": "assay.scorers.completeness:create_completeness_scorer",
    "content_similarity": "assay.scorers.heuristic:create_content_similarity_scorer",
    "keyword_coverage": "assay.scorers.heuristic:create_keyword_coverage_scorer",
    "textual_difference": "assay.scorers.heuristic:create_textual_difference_scorer",
    "tone": "assay.scorers.heuristic:create_tone_scorer",
    # judges on the default model
    "qa": "assay.evaluators.judge:qa_evaluator",
    "cot_qa": "assay.evaluators.judge:cot_qa_evaluator",
    "context_qa": "assay.evaluators.judge:context_qa_evaluator",
    "criteria": "assay.evaluators.judge:CriteriaEvaluator",
    "labeled_criteria": "assay.evaluators.judge:LabeledCriteriaEvaluator",
    # code
    "code_correctness": "assay.evaluators.code:CodeCorrectnessEvaluator",
    "program": "assay.evaluators.programs:ProgramEvaluator",
    "ruff_lint": "assay.evaluators.code.quality:RuffLintEvaluator",
    "bandit_security": "assay.evaluators.code.quality:BanditSecurityEvaluator",
    "sql_validity": "assay.evaluators.sql:SQLValidityEvaluator",
    "unit_tests": "assay.evaluators.unit_tests:UnitTestGenerationEvaluator",
    "data_transformation": "assay.evaluators.data:DataTransformationEvaluator",
    "api_calls": "assay.evaluators.api:APICallEvaluator",
    # agents
    "trajectory_match": "assay.evaluators.agents:TrajectoryMatchEvaluator",
    "tool_code": "assay.evaluators.agents:ToolCodeEvaluator",
}


def resolve_evaluator_name(name: str) -> Any:
    target = EVALUATOR_NAMES.get(name)
    if target is None:
        from assay._suggest import did_you_mean  # only on this error path

        known = ", ".join(sorted(EVALUATOR_NAMES))
        raise UnknownEvaluatorNameError(
            f"unknown evaluator name {name!r}{did_you_mean(name, EVALUATOR_NAMES)}; known names: {known}"
        )
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)()
