"""Whole programs on standard input and output (competitive-programming style): tests of
(stdin, expected stdout), built-in checkers and checker programs, judges' verdict kinds.
See ``docs/programs.md``."""

from assay.errors import CheckerProgramError
from assay.evaluators.programs._checkers import BUILT_IN as BUILT_IN_CHECKERS
from assay.evaluators.programs._evaluator import CheckerProgram, ProgramEvaluator
from assay.evaluators.programs._verdicts import KINDS as VERDICT_KINDS

__all__ = ["BUILT_IN_CHECKERS", "CheckerProgram", "CheckerProgramError", "ProgramEvaluator", "VERDICT_KINDS"]
