"""``RayExecutor``: rows of an experiment run on a Ray cluster, stored by the driver."""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Callable
from types import ModuleType
from typing import Any

from assay._traceback import describe
from assay.errors import ExecutorError, RayExecutorError, require_extra
from assay.evaluation.executor import RowFeed, RowPipeline
from assay.executors.ray._batches import BatchSizing
from assay.executors.ray._dispatch import Dispatcher, Shipment
from assay.executors.ray._shipping import send_user_code_by_value
from assay.executors.ray._worker import RowWorker
from assay.store.records import ExperimentRow


class RayExecutor:
    """Dispatches rows to a Ray cluster in batches; the calling process stays the one
    writer to the store.

    ``address``: ``"auto"`` (the cluster this machine belongs to), ``"ray://host:10001"``
    (Ray Client) or ``"host:6379"`` (a head node's GCS). ``workers``: how many
    long-lived worker processes (default: one per CPU of the cluster, spread over its
    nodes). ``threads_per_worker``: rows one worker runs at once (default:
    ``max_concurrency`` shared over the workers). ``batch_seconds``: the work a batch
    should hold, once rows are timed; ``max_batch_rows``: the most rows in one batch. ``max_attempts``: how many times a batch is sent
    before the run stops because its workers keep dying. ``runtime_env`` goes to
    ``ray.init`` (e.g. ``{"working_dir": "."}`` to ship the code the target imports).

    The workers live until :meth:`shutdown` (or the process ends), so a second
    experiment finds them warm.
    """

    def __init__(
        self,
        address: str = "auto",
        *,
        workers: int | None = None,
        threads_per_worker: int | None = None,
        batch_seconds: float = 0.25,
        max_batch_rows: int = 4096,
        max_attempts: int = 3,
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(address, str) or not address.strip():
            raise ExecutorError(
                f"RayExecutor(address=...) takes 'auto', 'ray://host:port' or 'host:port'; got {address!r}"
            )
        for name, value in (("workers", workers), ("threads_per_worker", threads_per_worker)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ExecutorError(f"RayExecutor({name}=...) must be a positive integer, got {value!r}")
        if max_attempts < 1:
            raise ExecutorError(f"RayExecutor(max_attempts=...) must be at least 1, got {max_attempts!r}")
        if not isinstance(max_batch_rows, int) or max_batch_rows < 1:
            raise ExecutorError(
                f"RayExecutor(max_batch_rows=...) must be a positive integer, got {max_batch_rows!r}"
            )
        if batch_seconds <= 0:
            raise ExecutorError(f"RayExecutor(batch_seconds=...) must be positive, got {batch_seconds!r}")
        self.address = address
        self._workers_wanted = workers
        self._threads_wanted = threads_per_worker
        self._batch_seconds = batch_seconds
        self._max_batch_rows = max_batch_rows
        self._max_attempts = max_attempts
        self._runtime_env = runtime_env
        self._lock = threading.Lock()
        self._connected_here = False
        self._actors: list[Any] = []
        self._pids: list[int | None] = []
        self._threads = 0
        self.resent_batches = 0  # batches sent again after a worker died, over all runs

    def __repr__(self) -> str:
        return f"RayExecutor(address={self.address!r})"

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    async def run_rows(
        self,
        pipeline: RowPipeline,
        feed: RowFeed,
        accept: Callable[[ExperimentRow], None],
        max_concurrency: int,
    ) -> None:
        ray = self._connect()
        actors = self._ensure_workers(ray, max_concurrency)
        shipment = Shipment(uuid.uuid4().hex, _put(ray, pipeline))
        dispatcher = Dispatcher(
            actors,
            shipment,
            feed,
            accept,
            BatchSizing(self._batch_seconds, max_rows=self._max_batch_rows),
            self._max_attempts,
            self._pids,
        )
        try:
            await dispatcher.run()
        finally:
            self.resent_batches += dispatcher.resent

    def worker_pids(self) -> list[int]:
        """The worker processes, as each reported with its last finished batch (a worker
        that was restarted shows its new process once it finished a batch)."""
        return [pid for pid in self._pids if pid is not None]

    @property
    def workers(self) -> list[Any]:
        """The workers' Ray actor handles."""
        return list(self._actors)

    def shutdown(self) -> None:
        """Stop the workers, and disconnect if this executor connected."""
        with self._lock:
            if not self._actors and not self._connected_here:
                return
            ray = _ray()
            for actor in self._actors:
                ray.kill(actor, no_restart=True)
            self._actors = []
            self._pids[:] = []
            if self._connected_here and ray.is_initialized():
                ray.shutdown()
            self._connected_here = False

    def _connect(self) -> ModuleType:
        ray = _ray()
        with self._lock:
            if not ray.is_initialized():
                ray.init(
                    address=self.address,
                    runtime_env=self._runtime_env,
                    logging_level="WARNING",
                    configure_logging=True,
                )
                self._connected_here = True
        return ray

    def _ensure_workers(self, ray: ModuleType, max_concurrency: int) -> list[Any]:
        with self._lock:
            count = self._workers_wanted or max(1, int(ray.cluster_resources().get("CPU", 1)))
            threads = self._threads_wanted or max(1, math.ceil(max_concurrency / count))
            if self._actors and (len(self._actors) != count or threads != self._threads):
                for actor in self._actors:
                    ray.kill(actor, no_restart=True)
                self._actors = []
            if not self._actors:
                remote = ray.remote(RowWorker).options(
                    num_cpus=1,
                    max_restarts=-1,  # a killed worker comes back; its batch is re-sent by the driver
                    max_task_retries=0,
                    max_concurrency=1,  # one batch at a time; the next waits beside it
                    scheduling_strategy="SPREAD",
                )
                self._actors = [remote.remote(threads) for _ in range(count)]
                self._pids[:] = [None] * count
                self._threads = threads
            return list(self._actors)


def _put(ray: ModuleType, pipeline: RowPipeline) -> Any:
    """The pipeline in Ray's object store, serialized once with cloudpickle."""
    send_user_code_by_value(pipeline)
    try:
        return ray.put(pipeline)
    except Exception as exc:  # e.g. a target holding a lock, a socket, an open file
        raise RayExecutorError(
            f"the target {pipeline.target.name!r} or its evaluators cannot be sent to the Ray "
            f"workers: {_pickling_error(exc, pipeline)}. Create such resources inside the "
            f"function, or once per process (e.g. functools.cache), instead of capturing them"
        ) from None


def _pickling_error(exc: Exception, pipeline: RowPipeline) -> str:
    """cloudpickle's own one-line error (Ray's is a long report with colour codes)."""
    from ray import cloudpickle

    try:
        cloudpickle.dumps(pipeline)
    except Exception as direct:
        return describe(direct)
    return describe(exc)


def _ray() -> ModuleType:
    return require_extra("ray", "ray", feature="the Ray executor")
