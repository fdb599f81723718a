"""The Store interface, implemented by the SQLite store (and the PostgreSQL one on it)."""

from __future__ import annotations

import abc
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from assay.schemas import Dataset, EvaluationResult, Example, Feedback, Run
from assay.store.records import (
    ComparisonRecord,
    ExperimentRecord,
    ExperimentRow,
    ExperimentStats,
    Lease,
    LeaseClaim,
)

if TYPE_CHECKING:
    from assay.store.fence import Fence

RowKey = tuple[int, int]
"""(position, repetition): a row's place in data order."""

ExampleValues = tuple[str, dict[str, Any], "dict[str, Any] | None", "dict[str, Any] | None"]
"""An example as plain values: ``(id as UUID text, inputs, outputs, metadata)``."""

__all__ = ["BatchWriter", "ExampleValues", "Store"]


class BatchWriter(Protocol):
    """Where a run's writer thread commits its batches (see ``Store.batch_writer``)."""

    def expect(self, rows: int) -> None:
        """The run has about ``rows`` rows to write: what serves large runs only may
        start now, before the first batch."""

    def write(self, prepared: Sequence[Any], stats: ExperimentStats | None) -> None:
        """``prepared`` rows stored with ``stats`` in one transaction, or an error raised;
        a writer may return once the batch is handed over (``unconfirmed_rows``), and
        raise its error from a later ``write`` or ``flush`` (the batches after it not
        stored)."""

    @property
    def unconfirmed_rows(self) -> int:
        """Rows written but not yet confirmed committed (what a crash of the machine may
        still lose)."""

    def flush(self) -> None:
        """Every batch written confirmed committed, or the error of one raised."""

    def ending(self, build_columns: bool) -> None:
        """The next ``write`` is the run's last; ``build_columns``: ``close`` will be
        asked to build the experiment's metric columns (a writer may mark their build
        pending in that batch's transaction rather than in one more of its own)."""

    def close(self, *, build_columns: bool = False) -> None:
        """``build_columns``: the run's last batch is written, and the writer may start
        building the experiment's metric columns (``finish_experiment`` builds them
        otherwise)."""


class _InlineBatchWriter:
    def __init__(self, store: Store, experiment_id: uuid.UUID, fence: Fence | None) -> None:
        self._store, self._experiment_id, self._fence = store, experiment_id, fence

    def expect(self, rows: int) -> None:
        pass

    def write(self, prepared: Sequence[Any], stats: ExperimentStats | None) -> None:
        self._store.write_batch(self._experiment_id, prepared, stats, self._fence)

    @property
    def unconfirmed_rows(self) -> int:
        return 0  # each batch committed before ``write`` returns

    def flush(self) -> None:
        pass

    def ending(self, build_columns: bool) -> None:
        pass

    def close(self, *, build_columns: bool = False) -> None:
        pass


class Store(abc.ABC):
    """Datasets (versioned examples), experiments, rows, summary results and a cache."""

    url: str

    # datasets and examples
    @abc.abstractmethod
    def create_dataset(
        self, name: str, description: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Dataset: ...

    @abc.abstractmethod
    def get_dataset(self, *, name: str | None = None, id: uuid.UUID | None = None) -> Dataset | None: ...

    @abc.abstractmethod
    def list_datasets(self) -> list[Dataset]: ...

    @abc.abstractmethod
    def delete_dataset(self, dataset_id: uuid.UUID) -> None: ...

    @abc.abstractmethod
    def add_examples(self, dataset_id: uuid.UUID, examples: Iterable[Example]) -> int:
        """Append examples as one new dataset version; returns that version. ``examples``
        may be any iterable (a generator streams). Their ``attachments`` (LangSmith's
        shapes, see ``store.attachments``) are stored with them."""

    def add_example_values(
        self,
        dataset_id: uuid.UUID,
        values: Iterable[ExampleValues],
        *,
        keep: bool = False,
        new: bool = False,
    ) -> tuple[int, Callable[[], Iterator[Example]] | None]:
        """``add_examples`` of plain values (inline data: no record made per example), all
        created now; returns the new version and, with ``keep``, when the store could keep
        them, a reader of the stored examples exactly as ``iter_examples`` would give
        them, without reading the store (None: read them from the store).

        ``new``: the caller has just created the dataset, empty, for a run it is about to
        start on it (``warm_writer``). The store may then hold them back until
        ``release_held_examples`` (the run calls it once its experiment is open) and commit
        them while the run starts: before any row the run writes (a run row never names an
        example not stored), in one transaction, and never into a dataset that is no
        longer empty."""
        examples = (
            Example(id=uuid.UUID(id_), inputs=inputs, outputs=outputs, metadata=metadata)
            for id_, inputs, outputs, metadata in values
        )
        return self.add_examples(dataset_id, examples), None

    def release_held_examples(self) -> None:
        """Commit, or have committed ahead of the run's rows, the examples
        ``add_example_values(new=True)`` held back (none here: it holds none)."""
        return None

    @abc.abstractmethod
    def update_example(self, example: Example) -> int:
        """Replace an example's content in a new dataset version; returns that version.
        Its ``attachments`` are the new version's files (None: those it had)."""

    @abc.abstractmethod
    def get_example(self, example_id: uuid.UUID) -> Example | None:
        """The current version of an example, or None."""

    @abc.abstractmethod
    def delete_example(self, example_id: uuid.UUID) -> int: ...

    def read_attachment(self, sha256: str) -> bytes:
        """A stored attachment's bytes by their SHA-256 (``NotFoundError`` once no
        dataset holds them)."""
        raise NotImplementedError(f"{type(self).__name__} does not store attachments")

    @abc.abstractmethod
    def iter_examples(
        self, dataset_id: uuid.UUID, *, version: int | None = None, page_size: int = 1000
    ) -> Iterator[Example]:
        """The examples at ``version`` in position order, read at most ``page_size`` at a time."""

    @abc.abstractmethod
    def count_examples(self, dataset_id: uuid.UUID, *, version: int | None = None) -> int: ...

    @abc.abstractmethod
    def list_examples(
        self,
        dataset_id: uuid.UUID,
        *,
        version: int | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[Example]: ...

    # experiments
    @abc.abstractmethod
    def create_experiment(self, record: ExperimentRecord, lease: LeaseClaim | None = None) -> None:
        """Store a new experiment (``AlreadyExistsError`` if its name is taken); with
        ``lease``, its shard's lease is taken in the same transaction (a new experiment
        has no holder to wait for: one commit instead of two)."""

    @abc.abstractmethod
    def get_experiment(
        self, *, name: str | None = None, id: uuid.UUID | None = None
    ) -> ExperimentRecord | None: ...

    @abc.abstractmethod
    def list_experiments(self) -> list[ExperimentRecord]: ...

    @abc.abstractmethod
    def finish_experiment(self, experiment_id: uuid.UUID, status: str, fence: Fence | None = None) -> None:
        """Set the experiment's final status; with ``fence``, only while that lease is
        still its run's (else ``LeaseFencedError``, nothing changed)."""

    @abc.abstractmethod
    def reopen_experiment(self, experiment_id: uuid.UUID) -> None: ...

    # leases: which process runs which shard of an experiment (a whole run is shard 0 of 1)
    @abc.abstractmethod
    def take_lease(
        self,
        experiment_id: uuid.UUID,
        shard: int,
        shards: int,
        *,
        host: str,
        pid: int,
        token: str,
        ttl: float,
        stale_token: str | None = None,
    ) -> Lease:
        """Take the lease of ``shard`` for ``ttl`` seconds unless another holder's lease is
        live (an expired one, or one held by ``stale_token``, is taken over), atomically
        across processes; returns the lease as stored afterwards: taken when its
        ``token`` is ``token``."""

    @abc.abstractmethod
    def renew_lease(self, experiment_id: uuid.UUID, shard: int, token: str, ttl: float) -> bool:
        """Extend the holder's lease by ``ttl`` from now; False when it is not the holder's."""

    @abc.abstractmethod
    def release_lease(self, experiment_id: uuid.UUID, shard: int, token: str, state: str) -> None:
        """End the holder's lease now, recording how the shard ended (failed, interrupted)."""

    @abc.abstractmethod
    def finish_shard(
        self, experiment_id: uuid.UUID, shard: int, token: str, *, completes: bool = False
    ) -> tuple[int, int] | None:
        """Mark the holder's shard done and end its lease: (shards done, shard count), or None
        if the lease is not the holder's. Finishers take turns, so exactly one sees all done;
        while shards remain, the experiment's status becomes ``partial`` in that transaction.
        ``completes``: the last shard's end is the experiment's too (a whole run whose rows,
        figures and summaries are stored): ``completed`` in that transaction, as
        ``finish_experiment`` would set it, without a commit of its own."""

    @abc.abstractmethod
    def list_leases(self, experiment_id: uuid.UUID) -> list[Lease]: ...

    # rows
    def write_rows(self, experiment_id: uuid.UUID, rows: Iterable[ExperimentRow]) -> None:
        """Write rows (run plus results) atomically: a row is either whole or absent."""
        self.write_prepared([self.prepare_row(experiment_id, row) for row in rows])

    @abc.abstractmethod
    def prepare_row(self, experiment_id: uuid.UUID, row: ExperimentRow) -> Any:
        """Encode a row for ``write_prepared``, a snapshot of it as it is. Pure and
        thread-safe: workers call it, so the single writer thread only writes (a store
        may leave part of the encoding to whoever writes the batch)."""

    @abc.abstractmethod
    def write_prepared(self, prepared: Sequence[Any]) -> None:
        """Write encoded rows in one transaction."""

    @abc.abstractmethod
    def write_batch(
        self,
        experiment_id: uuid.UUID,
        prepared: Sequence[Any],
        stats: ExperimentStats | None,
        fence: Fence | None = None,
    ) -> None:
        """Write encoded rows and (when given) the experiment's figures in one transaction,
        so stored counts always match stored rows. With ``fence``, the transaction is
        refused whole (``LeaseFencedError``) once that lease is not its run's."""

    def require_whole(self, *, thorough: bool = False) -> None:
        """Raise ``StoreCorruptError`` (naming what to do) if the store is damaged: before
        a run writes, and before its figures are shown. ``thorough``: check whatever it
        costs (a resume). None by default: a database server checks its own pages."""
        return None

    def settle_writers_of(self, run_pid: int) -> None:
        """Before a run takes the place of ``run_pid``, dead on this machine: wait for
        what that run handed to helper processes to be written (none by default)."""
        return None

    def batch_writer(self, experiment_id: uuid.UUID, fence: Fence | None = None) -> BatchWriter:
        """What a run's single writer thread commits its batches through (``write_batch``
        semantics, behind ``fence``: each batch one transaction; closed once the run's
        rows are all in). By default ``write_batch`` itself, in this process."""
        return _InlineBatchWriter(self, experiment_id, fence)

    def drop_connection(self) -> None:
        """Close the calling thread's connection, for a thread that is done with the store
        (a store with a connection a thread). By default nothing."""
        return None

    def warm_writer(self, rows: int) -> None:
        """A run of about ``rows`` rows is about to start (its data not stored yet): a
        store whose large runs write through a process of their own may start that
        process now, so that it is ready when the first batch is. By default nothing."""
        return None

    @abc.abstractmethod
    def write_stats(
        self, experiment_id: uuid.UUID, stats: ExperimentStats, fence: Fence | None = None
    ) -> None: ...

    @abc.abstractmethod
    def load_stats(self, experiment_id: uuid.UUID) -> ExperimentStats | None:
        """The stored figures, or None for an experiment stored before they were kept."""

    @abc.abstractmethod
    def discard_failed_runs(self, experiment_id: uuid.UUID, shard: tuple[int, int] | None = None) -> int:
        """Delete the rows whose target failed (with their results), so a resume reruns them;
        with ``shard=(i, n)``, only the rows of that shard: those whose row index
        (position x repetitions + repetition) is i modulo n."""

    @abc.abstractmethod
    def completed_keys(self, experiment_id: uuid.UUID) -> set[tuple[str, int]]:
        """The (example id, repetition) pairs already stored."""

    @abc.abstractmethod
    def stored_keys(self, experiment_id: uuid.UUID) -> Iterator[RowKey]:
        """The (position, repetition) of every stored row, in no particular order."""

    @abc.abstractmethod
    def count_rows(self, experiment_id: uuid.UUID) -> int: ...

    @abc.abstractmethod
    def load_rows(
        self,
        experiment: ExperimentRecord,
        *,
        after: RowKey | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[ExperimentRow]:
        """Stored rows in data order then repetition: those after the row ``after`` (or
        from ``offset``), at most ``limit`` of them (None: all, read page by page)."""

    @abc.abstractmethod
    def load_row_values(
        self,
        experiment: ExperimentRecord,
        field: str,
        *,
        after: RowKey | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[tuple[RowKey, Any]]:
        """Like ``load_rows``, one decoded field per row (``inputs``, ``outputs`` or
        ``reference_outputs``), without building records."""

    @abc.abstractmethod
    def iter_scores(self, experiment_id: uuid.UUID) -> Iterator[tuple[Any, ...]]:
        """Per stored result, in data order: (position, run failed, latency_ms, run id, key,
        score, result errored, usage JSON); a run without results comes once with key None."""

    @abc.abstractmethod
    def replace_summary_results(
        self, experiment_id: uuid.UUID, results: Sequence[EvaluationResult]
    ) -> None: ...

    @abc.abstractmethod
    def load_summary_results(self, experiment_id: uuid.UUID) -> list[EvaluationResult]: ...

    # re-scoring and housekeeping (defaults so other backends keep working until they add them)
    def write_results(
        self,
        experiment_id: uuid.UUID,
        results_by_run: Sequence[tuple[uuid.UUID, Sequence[EvaluationResult]]],
        *,
        replace: bool,
        fence: Fence | None = None,
    ) -> None:
        """Add results to stored runs in one transaction; with ``replace``, results of a run
        that carry a key among the new ones are deleted first; behind ``fence`` if given."""
        raise NotImplementedError(f"{type(self).__name__} cannot add results to stored runs")

    def update_experiment_config(self, experiment_id: uuid.UUID, config: dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot update an experiment's config")

    def update_experiment(
        self,
        experiment_id: uuid.UUID,
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Rename an experiment or replace its description or metadata (None keeps them)."""
        raise NotImplementedError(f"{type(self).__name__} cannot update an experiment")

    def set_metadata_field(
        self, table: Literal["datasets", "experiments"], record_id: uuid.UUID, name: str, value: Any
    ) -> None:
        """Set one field of a dataset's or an experiment's metadata (None removes it), the
        rest of the metadata as it stands at the write (read and written in one transaction)."""
        self.edit_metadata_field(table, record_id, name, lambda _current: value)

    def edit_metadata_field(
        self,
        table: Literal["datasets", "experiments"],
        record_id: uuid.UUID,
        name: str,
        edit: Callable[[Any], Any],
    ) -> Any:
        """Replace one metadata field by ``edit(current value)`` (None: unset; a None result
        removes it) and return the new value. The record is locked from the read to the
        write, so concurrent edits apply one after the other and none is lost; an exception
        from ``edit`` stores nothing."""
        raise NotImplementedError(f"{type(self).__name__} cannot edit metadata")

    def delete_experiment(self, experiment_id: uuid.UUID) -> None:
        """Delete an experiment with its runs, results and summary results."""
        raise NotImplementedError(f"{type(self).__name__} cannot delete experiments")

    # comparisons across experiments
    @abc.abstractmethod
    def add_comparisons(self, records: Sequence[ComparisonRecord]) -> None: ...

    @abc.abstractmethod
    def list_comparisons(self, name: str) -> list[ComparisonRecord]: ...

    # feedback on runs (Client.create_feedback) and run look-ups
    @abc.abstractmethod
    def add_feedback(self, feedback: Feedback) -> None: ...

    @abc.abstractmethod
    def list_feedback(
        self, run_ids: Sequence[uuid.UUID] | None = None, keys: Sequence[str] | None = None
    ) -> list[Feedback]:
        """Created feedback, then evaluator results as feedback, on the given runs."""

    def get_feedback(self, feedback_id: uuid.UUID) -> Feedback | None:
        """Created feedback by id (None if there is none)."""
        raise NotImplementedError(f"{type(self).__name__} cannot read feedback by id")

    def update_feedback(self, feedback_id: uuid.UUID, fields: dict[str, Any]) -> bool:
        """Set score, value, comment or correction of created feedback; False if it is not there."""
        raise NotImplementedError(f"{type(self).__name__} cannot update feedback")

    def delete_feedback(self, feedback_id: uuid.UUID) -> bool:
        """Delete created feedback; False if it is not there."""
        raise NotImplementedError(f"{type(self).__name__} cannot delete feedback")

    def feedback_labels(self, keys: Sequence[str]) -> list[tuple[Any, ...]]:
        """Created feedback of ``keys`` as (run id text, key, score, value, source type,
        created at), oldest first; stores may read it faster than ``list_feedback``."""
        return [
            (str(f.run_id), f.key, f.score, f.value, (f.feedback_source or {}).get("type"), f.created_at)
            for f in self.list_feedback(None, list(keys))
            if (f.feedback_source or {}).get("type") != "evaluator"
        ]

    @abc.abstractmethod
    def find_run(self, run_id: uuid.UUID) -> tuple[uuid.UUID, Run] | None:
        """(experiment id, root run) for a stored run or one of its child runs."""

    # runs traced outside an experiment's rows (Client.create_run / update_run)
    def add_traced_run(self, experiment_id: uuid.UUID, run: Run) -> bool:
        """Store a run (its child runs apart); False if one of that id is stored already."""
        raise NotImplementedError(f"{type(self).__name__} cannot store traced runs")

    def add_traced_runs(self, experiment_id: uuid.UUID, runs: Sequence[Run]) -> int:
        """Store runs (a whole trace, say) together; returns how many were new."""
        return sum(self.add_traced_run(experiment_id, run) for run in runs)

    def update_traced_run(self, run_id: uuid.UUID, fields: dict[str, Any]) -> bool:
        """Replace fields of a stored traced run; False if it is not there."""
        raise NotImplementedError(f"{type(self).__name__} cannot update traced runs")

    def get_traced_run(self, run_id: uuid.UUID) -> Run | None:
        """A traced run by id, without its children."""
        raise NotImplementedError(f"{type(self).__name__} cannot read traced runs")

    def list_traced_runs(
        self, experiment_id: uuid.UUID | None = None, trace_id: uuid.UUID | None = None
    ) -> list[Run]:
        """An experiment's (or a trace's) traced runs, oldest first, each naming its parent."""
        raise NotImplementedError(f"{type(self).__name__} cannot read traced runs")

    def iter_traced_runs(
        self, experiment_id: uuid.UUID | None = None, trace_id: uuid.UUID | None = None
    ) -> Iterator[Run]:
        """``list_traced_runs`` read a page at a time."""
        return iter(self.list_traced_runs(experiment_id, trace_id))

    # content-addressed cache
    @abc.abstractmethod
    def cache_get(self, namespace: str, key: str) -> bytes | None: ...

    @abc.abstractmethod
    def cache_put(self, namespace: str, key: str, value: bytes) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...
