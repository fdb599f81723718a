"""Code evaluators: correctness in the sandbox (with pass@k, calibrated timeouts and
execution time), generated test cases, and static quality and style checks."""

from assay.errors import CalibrationError, GenerationError
from assay.evaluators.code._calibrate import Calibrated
from assay.evaluators.code._evaluator import CodeCorrectnessEvaluator, pass_at_k, pass_at_k_estimate
from assay.evaluators.code.generate import GeneratedCases, GenerationOptions, generate_test_cases
from assay.evaluators.code.style import CodeStyleEvaluator

__all__ = [
    "Calibrated",
    "CalibrationError",
    "CodeCorrectnessEvaluator",
    "CodeStyleEvaluator",
    "GeneratedCases",
    "GenerationError",
    "GenerationOptions",
    "generate_test_cases",
    "pass_at_k",
    "pass_at_k_estimate",
]
