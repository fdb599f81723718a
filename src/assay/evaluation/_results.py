"""ExperimentResults: the rows of an experiment in data order, its summary results and aggregates.

Rows are read from the store on demand (``assay.evaluation._paged``), never held whole;
aggregates, error counts and usage come from the figures stored with the experiment, so
reading a finished experiment of any size costs a few small queries. The row source is
any sequence of ``ExperimentRow`` (stored rows, or a plain list).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from functools import cached_property
from typing import Any, overload

from assay._metric import Direction
from assay.errors import require_extra
from assay.evaluation._paged import stored_rows
from assay.evaluation._stats import MetricAggregate
from assay.evaluation._stream import RowStream
from assay.evaluation._tally import Tally, tally_of_stored, tally_row, usage_by_key
from assay.schemas import EvaluationResult, EvaluationResults
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats, MetricStats


class ExperimentResults:
    """Iterate rows ``{"run", "example", "evaluation_results"}``; read aggregates and summaries.

    From ``evaluate(..., blocking=False)`` the rows arrive while the experiment runs:
    iterating yields each as it finishes; ``wait()`` blocks until the end; everything
    else (``rows``, ``summary_results``, ``aggregate``) waits for the end first.
    """

    def __init__(
        self,
        experiment: ExperimentRecord,
        rows: Sequence[ExperimentRow],
        summary_results: list[EvaluationResult],
        store_url: str,
        *,
        stats: ExperimentStats | None = None,
        store: Store | None = None,
        stream: RowStream | None = None,
    ) -> None:
        self.experiment = experiment
        self._final_rows = rows
        self._summary = summary_results
        self.store_url = store_url
        self._stats = stats
        self._store = store  # rows are read from it; None when the rows were given
        self._stream = stream
        self._thread: threading.Thread | None = None

    @classmethod
    def of_stored(cls, store: Store, experiment: ExperimentRecord) -> ExperimentResults:
        """A stored experiment's results, its rows read from ``store`` page by page."""
        summary = store.load_summary_results(experiment.id)
        stats = store.load_stats(experiment.id)
        count = stats.rows if stats is not None and stats.final else None
        rows = stored_rows(store, experiment, count)
        return cls(experiment, rows, summary, store.url, stats=stats, store=store)

    @property
    def id(self) -> uuid.UUID:
        return self.experiment.id

    @property
    def experiment_id(self) -> uuid.UUID:
        return self.experiment.id

    @property
    def experiment_name(self) -> str:
        return self.experiment.name

    def get_dataset_id(self) -> str:
        """The id of the dataset the experiment ran on (LangSmith's)."""
        return str(self.experiment.dataset_id)

    @property
    def url(self) -> str | None:
        """LangSmith's web address of the experiment; assay's is ``assay ui`` (none here)."""
        return None

    comparison_url = url

    # The one way in to the rows: every reader below goes through _rows().
    def _rows(self) -> Sequence[ExperimentRow]:
        self._settle()
        return self._final_rows

    @property
    def rows(self) -> list[ExperimentRow]:
        """Every row as records, in data order (reads them all: prefer iterating)."""
        return list(self._rows())

    def _settle(self) -> None:
        """Wait for a streaming experiment to end, then take its outcome (or its error)."""
        stream = self._stream
        if stream is None:
            return
        stream.wait()
        if self._thread is not None:
            self._thread.join()
        self._take(stream)

    def _take(self, stream: RowStream) -> None:
        if stream.error is not None:
            raise stream.error
        if stream.outcome is not None:
            self.experiment = stream.outcome.record
            self._final_rows = stream.outcome.rows
            self._summary = stream.outcome.summary
            self._stats = stream.outcome.stats
        self._stream = None

    def wait(self) -> None:
        """Block until every row is done and the summaries are computed (LangSmith's)."""
        self._settle()

    @property
    def done(self) -> bool:
        return self._stream is None or self._stream.done

    def __len__(self) -> int:
        """Rows finished so far (all of them once done)."""
        if self._stream is not None and not self._stream.ended_well:
            return self._stream.arrived
        return len(self._rows())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        stream = self._stream
        if stream is not None and not stream.ended_well:
            yield from map(_row_dict, stream)  # in the order rows finish
            self._take(stream)  # raises what stopped the experiment, after its rows
            return
        yield from map(_row_dict, self._rows())

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        stream = self._stream
        if stream is not None and not stream.ended_well:
            async for row in stream.aiter():
                yield _row_dict(row)
            self._take(stream)
            return
        for row in self._rows():
            yield _row_dict(row)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return _row_dict(self._rows()[index])

    @property
    def summary_results(self) -> EvaluationResults:
        self._settle()
        return EvaluationResults(results=self._summary)

    @property
    def stats(self) -> ExperimentStats:
        """Counts and per-metric figures: stored ones when exact, else from the rows."""
        self._settle()
        if self._stats is not None and self._stats.final and self._stats.metrics is not None:
            return self._stats
        return self._tally.stats(final=False)

    @cached_property
    def _tally(self) -> Tally:
        """A one-pass tally of the stored scores: for an experiment still running, or one
        stored before figures were kept."""
        if self._store is not None:
            return tally_of_stored(self._store.iter_scores(self.experiment.id))
        tally = Tally()
        for row in self._rows():
            tally.add(tally_row(row))
        return tally

    @property
    def _summary_results(self) -> dict[str, Any]:
        """LangSmith's (private, but widely used) ``results._summary_results["results"]``."""
        return self.get_summary_scores()

    def get_summary_scores(self) -> dict[str, Any]:
        """Summary results as ``{"results": [...]}``, LangSmith's shape."""
        return {"results": list(self.summary_results.results)}

    @cached_property
    def aggregate(self) -> dict[str, MetricAggregate]:
        """Per metric key: mean, n, errors, skipped, standard error and 95% CI (Wilson for
        0/1 metrics, Student t clustered by example otherwise), with the metric's direction."""
        return {m.key: _aggregate_of(m) for m in self.stats.metrics or []}

    @property
    def target_errors(self) -> int:
        return self.stats.run_errors

    def usage(self) -> dict[str, float]:
        """Token usage (and cost) summed over every result that reports ``metadata["usage"]``."""
        return dict(self.stats.usage)

    def judge_usage(self) -> dict[str, dict[str, float]]:
        """Per judge (result key), its usage summed over its results: ``calls``, tokens,
        ``cost_usd``, ``repaired`` and ``unparsed`` replies, and ``judgements`` (results)."""
        if self._store is not None:
            return usage_by_key(self._store.iter_scores(self.experiment.id))
        return usage_by_key(
            (0, False, None, None, r.key, None, r.error is not None, (r.metadata or {}).get("usage"), None)
            for row in self._rows()
            for r in row.results
        )

    def compare(self, other: Any, *, cluster_by: str | None = None, **options: Any) -> Any:
        """The paired comparison of ``other`` against this experiment as the baseline: see
        ``assay.compare`` (returns an ``assay.Comparison``; ``options`` are its ``metrics``,
        ``test`` and ``interval``)."""
        from assay.comparison import compare

        return compare(self, other, client=self._store, cluster_by=cluster_by, **options)

    def to_pandas(self, start: int | None = 0, end: int | None = None) -> Any:
        """One line per row (``rows[start:end]``), LangSmith's columns: ``inputs.*``,
        ``outputs.*``, ``error``, ``reference.*``, ``feedback.*`` (score, else value),
        ``execution_time`` (seconds), ``example_id``, ``id`` (the run's)."""
        pd = require_extra("pandas", "pandas", feature="to_pandas()")
        return pd.DataFrame([_flat_row(row) for row in self._rows()[start:end]])

    def __repr__(self) -> str:
        if not self.done:
            return f"<ExperimentResults {self.experiment_name!r}: running>"
        return f"<ExperimentResults {self.experiment_name!r}: {len(self)} rows>"


class AsyncExperimentResults(ExperimentResults):
    """What ``aevaluate`` returns: also ``async for row in results`` and ``await results.wait()``."""

    task: asyncio.Future[None] | None = None  # with blocking=False: the experiment running

    async def wait(self) -> None:  # type: ignore[override]
        stream = self._stream
        if stream is not None:
            await stream.wait_async()
            self._take(stream)

    def _settle(self) -> None:
        if self._stream is not None and not self._stream.done:
            raise RuntimeError(
                "this aevaluate() experiment is still running: `await results.wait()` (or "
                "`async for row in results`) before reading rows, summaries or aggregates"
            )
        super()._settle()


def _aggregate_of(m: MetricStats) -> MetricAggregate:
    direction: Direction = "lower" if m.direction == "lower" else "higher"
    return MetricAggregate(
        m.key,
        m.mean,
        m.n,
        m.errors,
        m.stderr,
        m.ci_low,
        m.ci_high,
        skipped=m.skipped,
        method=m.ci_method,
        direction=direction,
        score_range=m.score_range,
    )


def _row_dict(row: ExperimentRow) -> dict[str, Any]:
    return {"run": row.run, "example": row.example, "evaluation_results": {"results": row.results}}


def _flat_row(row: ExperimentRow) -> dict[str, Any]:
    run, example = row.run, row.example
    record: dict[str, Any] = {f"inputs.{k}": v for k, v in (example.inputs or {}).items()}
    record.update({f"outputs.{k}": v for k, v in (run.outputs or {}).items()})
    record["error"] = run.error
    record.update({f"reference.{k}": v for k, v in (example.outputs or {}).items()})
    for result in row.results:
        record[f"feedback.{result.key}"] = result.score if result.score is not None else result.value
    record["execution_time"] = (run.end_time - run.start_time).total_seconds() if run.end_time else None
    record["example_id"] = run.reference_example_id
    record["id"] = run.id
    return record
