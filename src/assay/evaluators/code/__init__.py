"""Code evaluators: correctness in the sandbox (with pass@k) and static quality checks."""

from assay.evaluators.code._evaluator import CodeCorrectnessEvaluator, pass_at_k, pass_at_k_estimate

__all__ = ["CodeCorrectnessEvaluator", "pass_at_k", "pass_at_k_estimate"]
