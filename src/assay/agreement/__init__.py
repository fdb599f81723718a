"""How far a judge can be trusted: its agreement with people's labels on the same rows.

``judge_agreement(experiment, judge_key, human_key)`` reads the judge's results and the
human feedback (or reference labels) of a stored experiment and reports accuracy, Cohen's
kappa (weighted on an ordinal scale) and Spearman's rho, each with a 95% bootstrap
interval and n, the confusion matrix and the rows that disagree most; ``against=`` puts a
second judge on the same rows with a paired interval on the difference.
"""

from assay.agreement._api import judge_agreement
from assay.agreement._report import Confusion, Disagreement, JudgeAgreement, JudgeComparison

__all__ = ["Confusion", "Disagreement", "JudgeAgreement", "JudgeComparison", "judge_agreement"]
