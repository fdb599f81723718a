"""The JSON API's response shapes. The HTML pages render these same objects."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "Change", "CompareCell", "CompareMetric", "ComparePage", "CompareRow", "CompareShow",
    "DatasetSummary", "DatasetVersion", "ExamplePage", "ExampleView", "ExperimentDetail",
    "ExperimentList", "ExperimentRef", "ExperimentSummary", "Histogram", "HistogramBin",
    "LatencyStat", "MetricStat", "ResultView", "RowDetail", "RowFilter", "RowPage", "RowSummary",
    "RunNode", "ScoreCell", "SortKey",
]


class DatasetSummary(BaseModel):
    id: str
    name: str
    description: str | None = None
    created_at: str | None = None
    version: int = Field(description="the dataset's current version (each edit adds one)")
    example_count: int = Field(description="examples in the current version")
    experiment_count: int = 0


class DatasetVersion(BaseModel):
    version: int
    added: int = Field(description="examples added or edited in this version")
    removed: int = Field(description="examples removed or replaced in this version")


class ExampleView(BaseModel):
    id: str
    position: int
    inputs: Any = None
    outputs: Any = None
    metadata: Any = None
    added_version: int
    created_at: str | None = None


class ExperimentRef(BaseModel):
    id: str
    name: str


class ExamplePage(BaseModel):
    dataset: DatasetSummary
    version: int
    versions: list[DatasetVersion]
    q: str | None = None
    total: int
    page: int
    per_page: int
    examples: list[ExampleView]
    experiments: list[ExperimentRef]


class ExperimentSummary(BaseModel):
    id: str
    name: str
    dataset_id: str | None = None
    dataset_name: str | None = None
    dataset_version: int | None = None
    status: str
    created_at: str | None = None
    finished_at: str | None = None
    rows: int = Field(description="stored rows: one per (example, repetition)")
    run_errors: int = Field(description="rows whose target call failed")
    num_examples: int = 0
    num_repetitions: int = 1
    metric_means: dict[str, float | None] = Field(
        default_factory=dict, description="mean score per metric key, errored results excluded"
    )


class ExperimentList(BaseModel):
    q: str | None = None
    dataset_id: str | None = None
    total: int
    page: int
    per_page: int
    experiments: list[ExperimentSummary]


class MetricStat(BaseModel):
    key: str
    mean: float | None = None
    n: int = Field(description="scored results (errors excluded)")
    errors: int = Field(description="results whose evaluator failed")
    unscored: int = Field(0, description="results with neither score nor error (value only)")
    stderr: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    min: float | None = None
    max: float | None = None
    unit_range: bool = Field(description="every score lies in [0, 1]")


class HistogramBin(BaseModel):
    low: float
    high: float
    count: int


class Histogram(BaseModel):
    key: str
    bins: list[HistogramBin]
    errors: int


class ResultView(BaseModel):
    key: str
    score: float | None = None
    value: Any = None
    feedback: str | None = None
    comment: str | None = None
    correction: Any = None
    metadata: Any = None
    evaluator_info: Any = None
    error: str | None = None


class LatencyStat(BaseModel):
    mean_ms: float | None = None
    max_ms: float | None = None


class ExperimentDetail(BaseModel):
    experiment: ExperimentSummary
    description: str | None = None
    metadata: Any = None
    config: Any = None
    metrics: list[MetricStat]
    histograms: list[Histogram]
    summary_results: list[ResultView]
    latency: LatencyStat


class ScoreCell(BaseModel):
    key: str
    score: float | None = None
    value: Any = None
    error: str | None = None


class RowSummary(BaseModel):
    run_id: str
    example_id: str
    repetition: int
    position: int
    inputs: str = Field(description="a short text preview of the run's inputs")
    outputs: str = Field(description="a short text preview of the run's outputs")
    reference: str = Field(description="a short text preview of the example's reference outputs")
    error: str | None = None
    latency_ms: float | None = None
    scores: list[ScoreCell]


SortKey = str
"""``position``, ``latency``, ``error`` or ``metric:<key>``."""


class RowFilter(BaseModel):
    failed: bool = Field(
        False, description="only rows whose run failed, or with an errored result or a score < 1"
    )
    metric: str | None = None
    below: float | None = Field(None, description="with metric: only rows scoring below this")
    q: str | None = Field(None, description="substring searched in inputs and outputs")
    sort: SortKey = "position"
    order: Literal["asc", "desc"] = "asc"


class RowPage(BaseModel):
    experiment: ExperimentSummary
    filter: RowFilter
    metric_keys: list[str]
    total: int
    page: int
    per_page: int
    rows: list[RowSummary]


class RunNode(BaseModel):
    name: str | None = None
    run_type: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    offset_ms: float | None = Field(None, description="start, relative to the root run")
    duration_ms: float | None = None
    error: str | None = None
    inputs: Any = None
    outputs: Any = None
    children: list[RunNode] = Field(default_factory=list)


class RowDetail(BaseModel):
    experiment: ExperimentSummary
    run_id: str
    example_id: str
    repetition: int
    position: int
    inputs: Any = None
    outputs: Any = None
    reference_outputs: Any = None
    example_metadata: Any = None
    error: str | None = None
    run: RunNode
    results: list[ResultView]
    previous_run_id: str | None = None
    next_run_id: str | None = None


class CompareMetric(BaseModel):
    key: str
    means: dict[str, float | None] = Field(description="experiment id -> mean score")
    errors: dict[str, int] = Field(description="experiment id -> errored results")
    deltas: dict[str, float | None] = Field(description="experiment id -> mean minus baseline")
    regressions: dict[str, int] = Field(description="experiment id -> rows worse than baseline")
    improvements: dict[str, int] = Field(description="experiment id -> rows better than baseline")


Change = Literal["regressed", "improved", "mixed", "same"]


class CompareCell(BaseModel):
    experiment_id: str
    run_id: str | None = None
    outputs: str = ""
    error: str | None = None
    scores: list[ScoreCell]
    changes: dict[str, Change] = Field(
        default_factory=dict, description="metric key -> change against the baseline"
    )


class CompareRow(BaseModel):
    example_id: str
    repetition: int
    position: int
    inputs: str
    reference: str
    change: Change
    cells: list[CompareCell]


CompareShow = Literal["all", "regressions", "improvements", "changed"]


class ComparePage(BaseModel):
    experiments: list[ExperimentSummary]
    baseline_id: str
    metric_keys: list[str]
    metrics: list[CompareMetric]
    show: CompareShow
    metric: str | None = None
    total: int
    page: int
    per_page: int
    rows: list[CompareRow]
