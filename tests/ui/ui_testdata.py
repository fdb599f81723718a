"""Test data for the UI tests: stores filled through the real store API, and a real
uvicorn server on 127.0.0.1 serving the app. Imported by the tests (conftest puts this
folder on sys.path, since pytest runs with --import-mode=importlib)."""

from __future__ import annotations

import random
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import uvicorn

from assay.evaluation import EvaluationResult
from assay.evaluation._tally import tally_of_stored
from assay.schemas import Example, Run
from assay.store import Store
from assay.store.records import ExperimentRecord, ExperimentRow
from assay.ui import create_app

T0 = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
ERROR = "ERROR"
"""A score spec meaning "this evaluator failed"."""


@dataclass
class RowSpec:
    """One row to store: its outputs, target error, scores (or ERROR) and result metadata."""

    outputs: dict[str, Any] | None = None
    error: str | None = None
    scores: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    latency_ms: float | None = 10.0  # None: a run that never ended
    children: list[Run] = field(default_factory=list)
    repetition: int = 0
    info: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> evaluator_info


def make_dataset(store: Store, name: str, examples: list[dict[str, Any]]) -> tuple[Any, list[Example]]:
    dataset = store.create_dataset(name, description=f"the {name} dataset")
    stored = [Example(dataset_id=dataset.id, **example) for example in examples]
    store.add_examples(dataset.id, stored)
    fresh = store.get_dataset(id=dataset.id)
    assert fresh is not None
    return fresh, stored


def make_experiment(
    store: Store,
    name: str,
    dataset: Any,
    examples: list[Example],
    rows: list[RowSpec],
    *,
    summary: list[EvaluationResult] | None = None,
    created: datetime | None = None,
    figures: bool = False,
) -> ExperimentRecord:
    """Store an experiment whose i-th row runs on ``examples[i % len(examples)]``; with
    ``figures``, its final stored figures too, as ``evaluate``'s writer stores them."""
    reps = max(spec.repetition for spec in rows) + 1 if rows else 1
    record = create_experiment(store, name, dataset, examples, repetitions=reps, created=created)
    stored_rows = []
    for index, spec in enumerate(rows):
        example = examples[index % len(examples)]
        stored_rows.append(
            ExperimentRow(
                run=make_run(example, spec),
                example=example,
                repetition=spec.repetition,
                position=index % len(examples),
                results=_results(spec),
            )
        )
    store.write_rows(record.id, stored_rows)
    if summary:
        store.replace_summary_results(record.id, summary)
    if figures:
        store.write_stats(record.id, tally_of_stored(store.iter_scores(record.id)).stats(final=True))
    store.finish_experiment(record.id, "completed")
    return record


def create_experiment(
    store: Store,
    name: str,
    dataset: Any,
    examples: list[Example],
    *,
    repetitions: int = 1,
    created: datetime | None = None,
) -> ExperimentRecord:
    """A new experiment's record, stored, with no rows yet."""
    record = ExperimentRecord(
        name=name,
        dataset_id=dataset.id,
        dataset_version=dataset.version,
        status="completed",
        num_examples=len(examples),
        num_repetitions=repetitions,
        created_at=created or datetime.now(timezone.utc),
        config={"target": "fixture"},
        metadata={"model": "fake"},
    )
    store.create_experiment(record)
    return record


def make_run(example: Example, spec: RowSpec) -> Run:
    return Run(
        name="target",
        inputs=example.inputs,
        outputs=None if spec.error else spec.outputs,
        error=spec.error,
        start_time=T0,
        end_time=None if spec.latency_ms is None else T0 + timedelta(milliseconds=spec.latency_ms),
        child_runs=spec.children,
    )


def _results(spec: RowSpec) -> list[EvaluationResult]:
    results = []
    for key, score in spec.scores.items():
        metadata = dict(spec.metadata.get(key, {}))
        if score == ERROR:
            metadata["traceback"] = (
                f'Traceback (most recent call last):\n  File "eval.py"\nValueError: {key} broke'
            )
            results.append(EvaluationResult(key=key, error=f"ValueError: {key} broke", metadata=metadata))
        else:
            results.append(
                EvaluationResult(
                    key=key, score=score, metadata=metadata, evaluator_info=spec.info.get(key, {})
                )
            )
    return results


class LiveServer:
    """uvicorn serving the UI on 127.0.0.1 in a thread of this process."""

    def __init__(self, store: Store, token: str | None = None, *, read_only: bool = False) -> None:
        self.port = free_port()
        config = uvicorn.Config(
            create_app(store, token=token, read_only=read_only),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the UI server did not start within 10 s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def new_id() -> str:
    return str(uuid.uuid4())


# The standard scenario: twelve examples, a baseline and a candidate experiment.
#   failed baseline rows (target error, evaluator error or a score < 1): 1 3 4 5 7 9 11
#   candidate vs baseline: regressions 0 (correct) 5 (quality) 7 (judge error) 10 (target error)
#                          improvements 1 3 (correct) 4 (judge error gone) 9 (target error gone)
N = 12
BASELINE_FAILED = [1, 3, 4, 5, 7, 9, 11]
REGRESSIONS = [0, 5, 7, 10]
IMPROVEMENTS = [1, 3, 4, 9]

TEST_CASES = [
    {
        "test_case_index": 0,
        "input": [1, 2],
        "expected_output": 3,
        "actual_output": 3,
        "execution_success": True,
        "error_message": None,
    },
    {
        "test_case_index": 1,
        "input": [2, 2],
        "expected_output": 4,
        "actual_output": 5,
        "execution_success": True,
        "error_message": None,
    },
    {
        "test_case_index": 2,
        "input": [0, 0],
        "expected_output": 0,
        "actual_output": None,
        "execution_success": False,
        "error_message": "ZeroDivisionError: division by zero",
    },
]
SQL_DIFF = {
    "columns": ["id", "city"],
    "rows": [[1, "Paris"], [2, "Lyon"]],
    "expected_rows": [[1, "Paris"], [2, "Nice"]],
    "first_differences": [{"row": 1, "column": "city", "actual": "Lyon", "expected": "Nice"}],
}


def baseline_row(i: int) -> RowSpec:
    return RowSpec(
        outputs={"answer": f"answer {i}" if i % 2 == 0 else f"wrong {i}"},
        error="RuntimeError: model timed out" if i == 9 else None,
        scores={
            "correct": 1 if i % 2 == 0 else 0,
            "quality": 1.0 if i % 2 == 0 else 0.5,
            "judge": ERROR if i == 4 else 1,
        },
        metadata={"correct": {"test_cases_details": TEST_CASES}}
        if i == 1
        else {"quality": SQL_DIFF}
        if i == 2
        else {},
        latency_ms=10.0 + i,
        children=trace_children() if i == 0 else [],
    )


def candidate_row(i: int) -> RowSpec:
    spec = baseline_row(i)
    spec.error = "RuntimeError: rate limited" if i == 10 else None
    spec.outputs = {"answer": f"answer {i}" if i in (1, 3) else f"candidate {i}"}
    scores = dict(spec.scores)
    if i == 0:
        scores["correct"] = 0
    if i in (1, 3):
        scores["correct"] = 1
    if i == 5:
        scores["quality"] = 0.25
    scores["judge"] = ERROR if i == 7 else 1
    spec.scores = scores
    return spec


def trace_children() -> list[Run]:
    inner = Run(
        name="tokenize",
        run_type="tool",
        start_time=T0 + timedelta(milliseconds=1),
        end_time=T0 + timedelta(milliseconds=2),
    )
    retrieve = Run(
        name="retrieve",
        run_type="retriever",
        inputs={"query": "q"},
        outputs={"docs": ["a", "b"]},
        start_time=T0,
        end_time=T0 + timedelta(milliseconds=4),
        child_runs=[inner],
    )
    generate = Run(
        name="generate",
        run_type="llm",
        inputs={"prompt": "p"},
        outputs={"text": "t"},
        start_time=T0 + timedelta(milliseconds=4),
        end_time=T0 + timedelta(milliseconds=10),
        error=None,
    )
    return [retrieve, generate]


@dataclass
class Scenario:
    store: Store
    dataset: Any
    examples: list[Example]
    baseline: ExperimentRecord
    candidate: ExperimentRecord


def build_scenario(store: Store) -> Scenario:
    dataset, examples = make_dataset(
        store,
        "qa",
        [
            {
                "inputs": {"question": f"question {i}"},
                "outputs": {"answer": f"answer {i}"},
                "metadata": {"topic": "math" if i % 3 == 0 else "geo"},
            }
            for i in range(N)
        ],
    )
    summary = [
        EvaluationResult(key="pass_rate", score=0.5, comment="6 of 12"),
        EvaluationResult(key="f1", error="ZeroDivisionError: no positives"),
    ]
    baseline = make_experiment(
        store,
        "baseline",
        dataset,
        examples,
        [baseline_row(i) for i in range(N)],
        summary=summary,
        created=T0,
    )
    candidate = make_experiment(
        store,
        "candidate",
        dataset,
        examples,
        [candidate_row(i) for i in range(N)],
        created=T0 + timedelta(hours=1),
    )
    return Scenario(store, dataset, examples, baseline, candidate)


# Rows scored by three metrics, for the page tests' oracles: per key its score, None
# (unscored) or ERROR; "target": the target's error; "latency": ms (None: never ended).
ScoredRow = dict[str, Any]
SCORED_KEYS = ("ok", "leak", "sim")  # 0/1; 0/1 where lower is better; continuous
LOWER = {"direction": "lower"}


def scored_rows(seed: int, count: int, *, digits: int) -> list[ScoredRow]:
    """``count`` rows: ok, leak, and sim rounded to ``digits`` (fewer: more ties); some
    targets fail (every evaluator skipped), some evaluators fail."""
    rng = random.Random(seed)
    rows: list[ScoredRow] = []
    for _ in range(count):
        if rng.random() < 0.1:
            rows.append({"target": "RuntimeError: target broke", "ok": None, "leak": None, "sim": None})
            continue
        row: ScoredRow = {"target": None, "ok": rng.choice([0, 1, 1]), "leak": rng.choice([0, 0, 1])}
        row["sim"] = round(rng.random(), digits)
        if rng.random() < 0.15:
            row[rng.choice(SCORED_KEYS)] = ERROR
        rows.append(row)
    return rows


def build_scored(store: Store, name: str, rows: list[ScoredRow], *, examples: int | None = None) -> None:
    """Store ``rows`` as a finished experiment with its figures: row i on example
    ``i % examples`` (every row its own by default), repetition ``i // examples``."""
    examples = examples or len(rows)
    dataset, stored = make_dataset(store, name, [{"inputs": {"i": i}} for i in range(examples)])
    specs = [
        RowSpec(
            outputs={"o": i},
            error=row["target"],
            scores={key: row[key] for key in SCORED_KEYS if key in row},
            info={"leak": LOWER},
            repetition=i // examples,
            latency_ms=row.get("latency", 10.0),
        )
        for i, row in enumerate(rows)
    ]
    make_experiment(store, name, dataset, stored, specs, figures=True)


def fails(row: ScoredRow, thresholds: dict[str, float | None]) -> bool:
    """The rule of ``failing``: a failed target or evaluator, or a score at or worse than
    its metric's threshold (0/1 metrics: their worst value unless set)."""
    if row["target"] is not None or ERROR in row.values():
        return True
    every: dict[str, float | None] = {"ok": 0.0, "leak": 1.0, **thresholds}
    for key, threshold in every.items():
        score = row.get(key)
        if threshold is None or score is None:
            continue
        if (score >= threshold) if key == "leak" else (score <= threshold):
            return True
    return False
