"""Compatibility path for ``assay.evaluators.code.quality``."""

from assay.errors import ToolMissing
from assay.evaluators.code.quality import BanditSecurityEvaluator, RuffLintEvaluator

__all__ = ["BanditSecurityEvaluator", "RuffLintEvaluator", "ToolMissing"]
