"""The Ray executor (``assay[ray]``): rows run on a Ray cluster, the driver stores them."""

from assay.errors import RayExecutorError
from assay.executors.ray._executor import RayExecutor

__all__ = ["RayExecutor", "RayExecutorError"]
