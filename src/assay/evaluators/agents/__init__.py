"""Agents' tool use: trajectory match against a reference, an LLM judge of the trajectory,
and re-running the code an agent's Python tool executed."""

from assay.errors import TrajectoryError
from assay.evaluators.agents._calls import ToolCall
from assay.evaluators.agents._match import ArgumentRules, match_trajectory
from assay.evaluators.agents.tool_code import ToolCodeEvaluator
from assay.evaluators.agents.trajectory import (
    TrajectoryJudgeEvaluator,
    TrajectoryMatchEvaluator,
    render_trajectory,
)

__all__ = [
    "ArgumentRules",
    "ToolCall",
    "ToolCodeEvaluator",
    "TrajectoryError",
    "TrajectoryJudgeEvaluator",
    "TrajectoryMatchEvaluator",
    "match_trajectory",
    "render_trajectory",
]
