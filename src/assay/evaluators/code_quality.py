"""Compatibility path for ``assay.evaluators.code.quality``."""

from assay.evaluators.code.quality import BanditSecurityEvaluator, RuffLintEvaluator, ToolMissing

__all__ = ["BanditSecurityEvaluator", "RuffLintEvaluator", "ToolMissing"]
