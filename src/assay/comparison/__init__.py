"""Paired comparison of experiments: is B better than A, or is the difference noise?"""

from assay.comparison._compare import compare
from assay.comparison._model import Comparison, MetricComparison, SideSummary
from assay.comparison.comparability import check_comparable
from assay.errors import NotComparableError

__all__ = [
    "Comparison",
    "MetricComparison",
    "NotComparableError",
    "SideSummary",
    "check_comparable",
    "compare",
]
