"""``get_experiment_results`` and ``evaluate_run``: reading an experiment whole, and scoring
one stored run, as LangSmith's Client does. Loaded on first use (``import assay`` stays light):
``Client``'s methods of these names call in here."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

from assay.client._projects import ID, ProjectsRunsFeedback, as_uuid
from assay.errors import NotFoundError
from assay.schemas import EvaluationResult, EvaluationResults, Example, ExampleWithRuns, Run
from assay.store.records import ExperimentRecord, ExperimentRow

#: token counts an ``llm`` run reports in ``outputs["usage_metadata"]`` (wrap_openai's shape)
_TOKENS = {
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
    "total_tokens": "total_tokens",
}


class ExperimentReads:
    """What ``Client.get_experiment_results`` and ``Client.evaluate_run`` do, on its client."""

    def __init__(self, client: ProjectsRunsFeedback) -> None:
        self.client = client
        self.store = client.store

    def get_experiment_results(
        self,
        name: str | None = None,
        project_id: ID | None = None,
        preview: bool = False,
        comparative_experiment_id: ID | None = None,
        filters: dict[Any, list[str]] | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """``{"feedback_stats", "run_stats", "examples_with_runs"}`` for a stored experiment:
        per feedback key its count and mean, the runs' latency and tokens, and each example
        with its runs (one per repetition)."""
        if comparative_experiment_id is not None or filters:
            raise NotImplementedError(
                "get_experiment_results(comparative_experiment_id=, filters=) has no local form; "
                "read comparisons with assay.compare() or the experiment's rows"
            )
        record = self.client._experiment(project_id, name)
        rows = self.store.load_rows(record)
        return {
            "feedback_stats": _feedback_stats(rows),
            "run_stats": _run_stats(rows),
            "examples_with_runs": _examples_with_runs(record, rows, limit),
        }

    def evaluate_run(
        self,
        run: Run | ID,
        evaluator: Any,
        *,
        source_info: dict[str, Any] | None = None,
        reference_example: Example | ID | None = None,
        load_child_runs: bool = False,
        **ignored: Any,
    ) -> EvaluationResult | EvaluationResults:
        """Score one stored run with ``evaluator`` (a RunEvaluator or a function) and keep
        each result as feedback on the run (source type ``model``)."""
        from assay.evaluation.evaluator import RunEvaluator, run_evaluator

        stored = run if isinstance(run, Run) else self.client.read_run(run, load_child_runs=True)
        example = self._reference_of(stored, reference_example)
        scorer = evaluator if isinstance(evaluator, RunEvaluator) else run_evaluator(_callable(evaluator))
        outcome = scorer.evaluate_run(stored, example)
        results = outcome.results if isinstance(outcome, EvaluationResults) else [outcome]
        for result in results:
            self.client.create_feedback(
                result.target_run_id or stored.id,
                result.key,
                score=result.score,
                value=result.value,
                comment=result.comment or result.error,
                correction=result.correction,
                source_info={**(source_info or {}), **({"error": result.error} if result.error else {})},
                feedback_source_type="model",
            )
        return outcome

    def _reference_of(self, run: Run, given: Example | ID | None) -> Example | None:
        if isinstance(given, Example):
            return given
        wanted = given if given is not None else run.reference_example_id
        if wanted is None:
            return None
        found = self.store.get_example(as_uuid(wanted, "reference_example"))
        if found is None:
            raise NotFoundError(f"no example with id {wanted} in {self.store.url}")
        return found


def _callable(evaluator: Any) -> Callable[..., Any]:
    if not callable(evaluator):
        raise TypeError(f"evaluator= takes a RunEvaluator or a function, got {type(evaluator).__name__}")
    return evaluator  # type: ignore[no-any-return]


def _feedback_stats(rows: list[ExperimentRow]) -> dict[str, dict[str, Any]]:
    scores: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    for row in rows:
        for result in row.results:
            scores.setdefault(result.key, [])
            if result.numeric_score is not None:
                scores[result.key].append(result.numeric_score)
            if result.error is not None:
                errors[result.key] = errors.get(result.key, 0) + 1
    return {
        key: {
            "n": len(values),
            "avg": statistics.fmean(values) if values else None,
            "stdev": statistics.pstdev(values) if values else None,
            "errors": errors.get(key, 0),
        }
        for key, values in scores.items()
    }


def _run_stats(rows: list[ExperimentRow]) -> dict[str, Any]:
    latencies = sorted(r.run.end_time - r.run.start_time for r in rows if r.run.end_time is not None)
    tokens = {name: 0 for name in _TOKENS}
    for row in rows:
        for run in _walk(row.run):
            usage = (run.outputs or {}).get("usage_metadata")
            if isinstance(usage, dict):
                for name, field in _TOKENS.items():
                    tokens[name] += int(usage.get(field) or 0)
    return {
        "run_count": len(rows),
        "latency_p50": _percentile(latencies, 0.5),
        "latency_p99": _percentile(latencies, 0.99),
        **tokens,
        "last_run_start_time": max((r.run.start_time for r in rows), default=None),
        "run_facets": [],
        "total_cost": None,
        "prompt_cost": None,
        "completion_cost": None,
        "error_rate": sum(r.run.error is not None for r in rows) / len(rows) if rows else None,
    }


def _percentile(ordered: list[timedelta], fraction: float) -> timedelta | None:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _walk(run: Run) -> Iterator[Run]:
    yield run
    for child in run.child_runs:
        yield from _walk(child)


def _examples_with_runs(
    record: ExperimentRecord, rows: list[ExperimentRow], limit: int | None
) -> Iterator[ExampleWithRuns]:
    grouped: dict[Any, ExampleWithRuns] = {}
    for row in rows:
        found = grouped.get(row.example.id)
        if found is None:
            fields = row.example.model_dump()
            found = grouped[row.example.id] = ExampleWithRuns(**fields, runs=[])
        found.runs.append(row.run.model_copy(update={"session_id": record.id}))
    examples = list(grouped.values())
    return iter(examples if limit is None else examples[:limit])
