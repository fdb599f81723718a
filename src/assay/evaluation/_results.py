"""ExperimentResults: the rows of an experiment in data order, its summary results and aggregates."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from functools import cached_property
from typing import Any

from assay._metric import MetricInfo
from assay.errors import require_extra
from assay.evaluation._stats import MetricAggregate, aggregate
from assay.schemas import EvaluationResult, EvaluationResults
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow


class ExperimentResults:
    """Iterate rows ``{"run", "example", "evaluation_results"}``; read aggregates and summaries."""

    def __init__(
        self,
        experiment: ExperimentRecord,
        rows: list[ExperimentRow],
        summary_results: list[EvaluationResult],
        store_url: str,
        *,
        store: Store | None = None,
    ) -> None:
        self.experiment = experiment
        self.rows = rows
        self._summary = summary_results
        self.store_url = store_url
        self._store = store  # for compare(); None when only the URL is known

    @property
    def id(self) -> uuid.UUID:
        return self.experiment.id

    @property
    def experiment_name(self) -> str:
        return self.experiment.name

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for row in self.rows:
            yield {
                "run": row.run,
                "example": row.example,
                "evaluation_results": {"results": row.results},
            }

    @property
    def summary_results(self) -> EvaluationResults:
        return EvaluationResults(results=self._summary)

    @cached_property
    def aggregate(self) -> dict[str, MetricAggregate]:
        """Per metric key: mean, n, errors, skipped, standard error and 95% CI (Wilson for
        0/1 metrics, Student t clustered by example otherwise), with the metric's direction."""
        scores: dict[str, list[float]] = {}
        clusters: dict[str, list[str]] = {}
        errors: dict[str, int] = {}
        skipped: dict[str, int] = {}
        infos: dict[str, MetricInfo] = {}
        for row in self.rows:
            for result in row.results:
                errors.setdefault(result.key, 0)
                if result.key not in infos and result.evaluator_info:
                    infos[result.key] = MetricInfo.of(result.evaluator_info)
                if result.error is not None:
                    errors[result.key] += 1
                    continue
                value = result.numeric_score
                if value is not None:
                    scores.setdefault(result.key, []).append(value)
                    clusters.setdefault(result.key, []).append(str(row.example.id))
                elif row.run.error is not None:  # no score, no error, failed target
                    skipped[result.key] = skipped.get(result.key, 0) + 1
        return {
            key: aggregate(key, scores.get(key, []), clusters.get(key, []), errors[key],
                           skipped=skipped.get(key, 0), info=infos.get(key))
            for key in errors
        }

    @property
    def target_errors(self) -> int:
        return sum(1 for row in self.rows if row.run.error is not None)

    def usage(self) -> dict[str, float]:
        """Token usage (and cost) summed over every result that reports ``metadata["usage"]``."""
        totals: dict[str, float] = {}
        for row in self.rows:
            for result in row.results:
                usage = result.metadata.get("usage") if result.metadata else None
                if not isinstance(usage, dict):
                    continue
                for name, value in usage.items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        totals[name] = totals.get(name, 0) + value
        return totals

    def compare(self, other: Any, *, cluster_by: str | None = None) -> Any:
        """The paired comparison of ``other`` against this experiment as the baseline: see
        ``assay.compare`` (returns an ``assay.Comparison``)."""
        from assay.comparison import compare

        return compare(self, other, client=self._store, cluster_by=cluster_by)

    def to_pandas(self) -> Any:
        pd = require_extra("pandas", "pandas", feature="to_pandas()")
        return pd.DataFrame([_flat_row(row) for row in self.rows])

    def __repr__(self) -> str:
        return f"<ExperimentResults {self.experiment_name!r}: {len(self.rows)} rows>"


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
