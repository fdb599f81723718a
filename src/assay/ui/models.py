"""The JSON API's response shapes. The HTML pages render these same objects."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "Change",
    "CompareCell",
    "CompareMetric",
    "ComparePage",
    "CompareRow",
    "CompareShow",
    "DatasetSummary",
    "DatasetVersion",
    "ExamplePage",
    "ExampleView",
    "ExperimentDetail",
    "ExperimentList",
    "ExperimentRef",
    "ExperimentSummary",
    "Histogram",
    "HistogramBin",
    "HumanCell",
    "HumanMetric",
    "LabelShare",
    "LatencyStat",
    "MetricStat",
    "ResultView",
    "RowDetail",
    "RowFilter",
    "RowPage",
    "RowSummary",
    "RunNode",
    "ScoreCell",
    "SortKey",
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
    summary_scores: dict[str, float | None] = Field(
        default_factory=dict, description="the summary evaluators' scores (on the experiment list)"
    )


class ExperimentList(BaseModel):
    q: str | None = None
    dataset_id: str | None = None
    sort: str = Field("created", description="created, name, dataset, status, rows, errors or metric:<key>")
    order: Literal["asc", "desc"] = "desc"
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
    skipped: int = Field(0, description="not called: the target failed and the evaluator needs outputs")
    stderr: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = Field(None, description="how the 95% interval was computed")
    direction: Literal["higher", "lower"] = Field("higher", description="which way is better")
    score_range: tuple[float | None, float | None] | None = None
    binary: bool = Field(False, description="every score is 0 or 1")
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


class FeedbackView(BaseModel):
    """Feedback a person or a program left on a run (``Client.create_feedback``)."""

    key: str
    score: float | int | bool | None = None
    value: Any = None
    comment: str | None = None
    correction: Any = None
    source: Any = None
    created_at: str | None = None


class HumanCell(BaseModel):
    """One key's labels on one row: the annotators' mean score, or their labels."""

    key: str
    score: float | None = None
    labels: list[str] = Field(default_factory=list, description="each annotator's label or score")
    annotators: int


class LabelShare(BaseModel):
    label: str
    count: int
    share: float
    ci_low: float
    ci_high: float


class HumanMetric(BaseModel):
    key: str
    kind: str
    rows: int = Field(description="rows with at least one label on this key")
    labels: int = Field(description="labels counted: one per annotator and row")
    annotators: list[str]
    mean: float | None = Field(None, description="mean over rows of the annotators' mean score")
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = None
    shares: list[LabelShare] = Field(default_factory=list, description="a label key's labels")


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
    human_metrics: list[HumanMetric] = Field(
        default_factory=list, description="people's labels per feedback key, with 95% intervals"
    )
    human_error: str | None = Field(default=None, description="why the feedback keys cannot be read")


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
    inputs: str = Field(
        description="a short text preview of the run's inputs (a multi-line text keeps its lines)"
    )
    outputs: str = Field(
        description="a short text preview of the run's outputs (a multi-line text keeps its lines)"
    )
    reference: str = Field(description="a short text preview of the example's reference outputs (lines kept)")
    error: str | None = None
    latency_ms: float | None = None
    scores: list[ScoreCell]
    human: list[HumanCell] = Field(default_factory=list, description="people's labels per key")


SortKey = str
"""``position``, ``latency``, ``error`` or ``metric:<key>``."""


class RowFilter(BaseModel):
    failed: bool = Field(
        False,
        description="only failing rows: the target or an evaluator failed, a 0/1 metric at its worst "
        "value, or the chosen metric worse than its threshold",
    )
    metric: str | None = None
    below: float | None = Field(None, description="with metric: only rows scoring below this")
    worse_than: float | None = Field(
        None,
        description="with metric: its failing threshold, read with its direction "
        "(below it if higher is better, above it if lower is better)",
    )
    thresholds: dict[str, float | None] = Field(
        default_factory=dict,
        description="per metric key, its failing threshold: a row fails when the metric scores "
        "at it or worse (at or below if higher is better, at or above if lower is better); "
        "None: no threshold. A 0/1 metric without one fails at its worst value, a continuous "
        "one never. Query parameters fail.<key>=<number>, empty for none",
    )
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
    next_after: str | None = Field(
        None,
        description="the last row's place in a sort read from an index: pass it as 'after' "
        "with the next page number, and the next page starts there instead of walking to its offset",
    )


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
    feedback: list[FeedbackView] = Field(default_factory=list)
    previous_run_id: str | None = None
    next_run_id: str | None = None


Verdict = Literal["better", "worse", "no detectable difference", "not enough pairs"]


class PairedStat(BaseModel):
    """One compared experiment against the baseline on one metric, paired by example."""

    mean_a: float | None = Field(None, description="baseline mean over the paired examples")
    mean_b: float | None = Field(None, description="this experiment's mean over the paired examples")
    difference: float | None = Field(None, description="mean_b - mean_a")
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = None
    p_value: float | None = None
    p_holm: float | None = Field(None, description="Holm-adjusted across the compared metrics")
    test: str | None = None
    mde: float | None = Field(None, description="smallest difference detected with 80% power")
    n_paired: int = 0
    only_a: int = 0
    only_b: int = 0
    verdict: Verdict = "not enough pairs"
    improving: bool | None = Field(None, description="the difference is in the better direction")


class CompareMetric(BaseModel):
    key: str
    direction: Literal["higher", "lower"] = "higher"
    paired: dict[str, PairedStat] = Field(
        default_factory=dict, description="experiment id -> paired statistics against the baseline"
    )
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
    notes: dict[str, list[str]] = Field(
        default_factory=dict, description="experiment id -> what made its comparison partial"
    )
    baseline_id: str
    metric_keys: list[str]
    metrics: list[CompareMetric]
    show: CompareShow
    metric: str | None = None
    total: int
    page: int
    per_page: int
    rows: list[CompareRow]
