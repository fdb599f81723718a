"""Public evaluation API, shaped after ``langsmith.evaluation``."""

from assay.evaluation._api import aevaluate, evaluate
from assay.evaluation._binding import EvaluatorSignatureError
from assay.evaluation._data import DataError
from assay.evaluation._experiment import ExperimentError
from assay.evaluation._interrupt import ExperimentInterrupted
from assay.evaluation._rescore import aevaluate_existing, evaluate_existing
from assay.evaluation._results import ExperimentResults
from assay.evaluation._runner import RowFailedError
from assay.evaluation.evaluator import BaseEvaluator, RunEvaluator, run_evaluator
from assay.evaluators.judge.pairwise import aevaluate_comparative, evaluate_comparative
from assay.schemas import EvaluationResult, EvaluationResults

__all__ = [
    "BaseEvaluator", "DataError", "EvaluationResult", "EvaluationResults",
    "EvaluatorSignatureError", "ExperimentError", "ExperimentInterrupted", "ExperimentResults",
    "RowFailedError", "RunEvaluator", "aevaluate", "aevaluate_comparative", "aevaluate_existing",
    "evaluate", "evaluate_comparative", "evaluate_existing", "run_evaluator",
]
