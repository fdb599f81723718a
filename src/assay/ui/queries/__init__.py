"""What the UI's pages and API answers show, built from the store's read model (``assay.store.read``)."""

from assay.ui.queries.compare import compare_page
from assay.ui.queries.datasets import example_page, find_dataset, list_datasets
from assay.ui.queries.experiments import experiment_detail, find_experiment, list_experiments
from assay.ui.queries.metrics import metric_stats, metrics_and_histograms
from assay.ui.queries.rows import row_detail, row_page

__all__ = [
    "compare_page",
    "example_page",
    "experiment_detail",
    "find_dataset",
    "find_experiment",
    "list_datasets",
    "list_experiments",
    "metric_stats",
    "metrics_and_histograms",
    "row_detail",
    "row_page",
]
