"""ExperimentResults: the rows of an experiment in data order, its summary results and aggregates.

Rows are read from the store on demand (``assay.evaluation._paged``), never held whole;
aggregates, error counts and usage come from the figures stored with the experiment, so
reading a finished experiment of any size costs a few small queries. The row source is
any sequence of ``ExperimentRow`` (stored rows, or a plain list).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import Any, overload

from assay._metric import Direction
from assay.errors import require_extra
from assay.evaluation._stats import MetricAggregate
from assay.evaluation._tally import Tally, tally_of_stored, tally_row
from assay.schemas import EvaluationResult, EvaluationResults
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats, MetricStats


class ExperimentResults:
    """Iterate rows ``{"run", "example", "evaluation_results"}``; read aggregates and summaries."""

    def __init__(
        self,
        experiment: ExperimentRecord,
        rows: Sequence[ExperimentRow],
        summary_results: list[EvaluationResult],
        store_url: str,
        *,
        stats: ExperimentStats | None = None,
        store: Store | None = None,
    ) -> None:
        self.experiment = experiment
        self._rows = rows
        self._summary = summary_results
        self.store_url = store_url
        self._stats = stats
        self._store = store  # rows are read from it; None when the rows were given

    @property
    def id(self) -> uuid.UUID:
        return self.experiment.id

    @property
    def experiment_name(self) -> str:
        return self.experiment.name

    @property
    def rows(self) -> list[ExperimentRow]:
        """Every row as records, in data order (reads them all: prefer iterating)."""
        return list(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for row in self._rows:
            yield _as_dict(row)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return _as_dict(self._rows[index])

    @property
    def summary_results(self) -> EvaluationResults:
        return EvaluationResults(results=self._summary)

    @property
    def stats(self) -> ExperimentStats:
        """Counts and per-metric figures: stored ones when exact, else from the rows."""
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
        for row in self._rows:
            tally.add(tally_row(row))
        return tally

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

    def compare(self, other: Any, *, cluster_by: str | None = None) -> Any:
        """The paired comparison of ``other`` against this experiment as the baseline: see
        ``assay.compare`` (returns an ``assay.Comparison``)."""
        from assay.comparison import compare

        return compare(self, other, client=self._store, cluster_by=cluster_by)

    def to_pandas(self) -> Any:
        pd = require_extra("pandas", "pandas", feature="to_pandas()")
        return pd.DataFrame([_flat_row(row) for row in self._rows])

    def __repr__(self) -> str:
        return f"<ExperimentResults {self.experiment_name!r}: {len(self)} rows>"


def _aggregate_of(m: MetricStats) -> MetricAggregate:
    direction: Direction = "lower" if m.direction == "lower" else "higher"
    return MetricAggregate(
        m.key, m.mean, m.n, m.errors, m.stderr, m.ci_low, m.ci_high,
        skipped=m.skipped, method=m.ci_method, direction=direction, score_range=m.score_range,
    )


def _as_dict(row: ExperimentRow) -> dict[str, Any]:
    return {"run": row.run, "example": row.example, "evaluation_results": {"results": row.results}}


def _flat_row(row: ExperimentRow) -> dict[str, Any]:
    record: dict[str, Any] = {
        "example_id": str(row.example.id),
        "repetition": row.repetition,
        "error": row.run.error,
        "execution_time": (row.run.latency_ms or 0.0) / 1000.0,
    }
    record.update({f"inputs.{k}": v for k, v in row.example.inputs.items()})
    record.update({f"outputs.{k}": v for k, v in (row.run.outputs or {}).items()})
    record.update({f"reference.{k}": v for k, v in (row.example.outputs or {}).items()})
    for result in row.results:
        record[f"feedback.{result.key}"] = result.score if result.error is None else None
    return record
