"""The UI's read-only SQL over the store: every page and API answer comes from here."""

from assay.ui.queries.compare import compare_page
from assay.ui.queries.datasets import example_page, find_dataset, list_datasets
from assay.ui.queries.experiments import (
    experiment_detail,
    find_experiment,
    histograms,
    list_experiments,
    metric_stats,
)
from assay.ui.queries.rows import row_detail, row_page

__all__ = [
    "compare_page", "example_page", "experiment_detail", "find_dataset", "find_experiment",
    "histograms", "list_datasets", "list_experiments", "metric_stats", "row_detail", "row_page",
]
