"""Where rows run: in this process (the default) or on a Ray cluster (``assay[ray]``)."""

from assay.errors import ExecutorError
from assay.evaluation.executor import Executor, LocalExecutor
from assay.executors.ray import RayExecutor

__all__ = ["Executor", "ExecutorError", "LocalExecutor", "RayExecutor"]
