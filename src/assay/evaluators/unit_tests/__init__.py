"""Generated unit tests: do they pass on the reference, kill its mutants, cover it?"""

from assay.evaluators.unit_tests._evaluator import UnitTestGenerationEvaluator
from assay.evaluators.unit_tests._mutants import Mutant, mutants

__all__ = ["Mutant", "UnitTestGenerationEvaluator", "mutants"]
