"""Reading and writing an experiment's rows in bounded pages, and its stored figures.

Rows are read in data order by keyset ((position, repetition) after the last one seen),
so reading page k costs the same as reading page 1; nothing here holds more than a page.
Batches are inserted with multi-row ``INSERT ... VALUES (...), (...)`` statements
(``_row_text.insert_many``).
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

from assay.schemas import EvaluationResult, Example
from assay.store import _codec as codec
from assay.store import _row_text
from assay.store._json import dumps, loads
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats, MetricStats

RowKey = tuple[int, int]
"""(position, repetition): a row's place in data order."""

VALUE_FIELDS = ("inputs", "outputs", "reference_outputs")
insert_encoded = _row_text.insert_encoded


# pages of rows
def _after(after: RowKey | None) -> tuple[str, tuple[Any, ...]]:
    if after is None:
        return "", ()
    return " AND (u.position, u.repetition) > (?, ?)", after


def _page(limit: int | None, offset: int) -> tuple[str, tuple[int, int]]:
    return " ORDER BY u.position, u.repetition LIMIT ? OFFSET ?", (
        -1 if limit is None else limit,
        offset,
    )


def examples_alive(version: int | None) -> tuple[str, tuple[Any, ...]]:
    if version is None:
        return "e.removed_version IS NULL", ()
    return (
        "e.added_version <= ? AND (e.removed_version IS NULL OR e.removed_version > ?)",
        (version, version),
    )


def load_rows(
    conn: sqlite3.Connection,
    experiment: ExperimentRecord,
    after: RowKey | None,
    offset: int,
    limit: int | None,
) -> list[ExperimentRow]:
    """A page of rows (runs with their results and examples), in data order."""
    after_sql, after_params = _after(after)
    page_sql, page_params = _page(limit, offset)
    runs = conn.execute(
        f"SELECT * FROM runs u WHERE u.experiment_id = ?{after_sql}{page_sql}",
        (str(experiment.id), *after_params, *page_params),
    ).fetchall()
    if not runs:
        return []
    results = _results_of(conn, [run["id"] for run in runs])
    examples = _examples_of(conn, experiment, {run["example_id"] for run in runs})
    return [
        ExperimentRow(
            run=codec.run_from(run),
            example=examples.get(run["example_id"]) or Example(id=uuid.UUID(run["example_id"])),
            repetition=run["repetition"],
            position=run["position"],
            results=results.get(run["id"], []),
        )
        for run in runs
    ]


def _results_of(conn: sqlite3.Connection, run_ids: list[str]) -> dict[str, list[EvaluationResult]]:
    results: dict[str, list[EvaluationResult]] = {}
    marks = ", ".join("?" * len(run_ids))
    for row in conn.execute(f"SELECT * FROM results WHERE run_id IN ({marks}) ORDER BY pk", run_ids):
        results.setdefault(row["run_id"], []).append(codec.result_from(row))
    return results


def _examples_of(conn: sqlite3.Connection, experiment: ExperimentRecord, ids: set[str]) -> dict[str, Example]:
    if experiment.dataset_id is None:
        return {}
    alive, alive_params = examples_alive(experiment.dataset_version)
    ordered = sorted(ids)
    marks = ", ".join("?" * len(ordered))
    rows = conn.execute(
        f"SELECT * FROM examples e WHERE e.dataset_id = ? AND e.id IN ({marks}) AND {alive}",
        (str(experiment.dataset_id), *ordered, *alive_params),
    )
    dataset_id = experiment.dataset_id
    return {row["id"]: codec.example_from(row, dataset_id) for row in rows}


def load_row_values(
    conn: sqlite3.Connection,
    experiment: ExperimentRecord,
    field: str,
    after: RowKey | None,
    offset: int,
    limit: int | None,
) -> list[tuple[RowKey, Any]]:
    """One argument of the summary evaluators (``inputs``, ``outputs`` or
    ``reference_outputs``) for a page of rows, decoded from JSON only: no records built."""
    if field not in VALUE_FIELDS:
        raise ValueError(f"field must be one of {VALUE_FIELDS}, got {field!r}")
    after_sql, after_params = _after(after)
    page_sql, page_params = _page(limit, offset)
    if field == "reference_outputs":
        alive, alive_params = examples_alive(experiment.dataset_version)
        source = (
            "e.outputs FROM runs u LEFT JOIN examples e ON e.dataset_id = ? "
            f"AND e.id = u.example_id AND {alive}"
        )
        params: tuple[Any, ...] = (str(experiment.dataset_id), *alive_params)
    else:
        source, params = f"u.{field} FROM runs u", ()
    rows = conn.execute(
        f"SELECT u.position, u.repetition, {source} WHERE u.experiment_id = ?{after_sql}{page_sql}",
        (*params, str(experiment.id), *after_params, *page_params),
    )
    return [((row[0], row[1]), loads(row[2]) or {}) for row in rows]


def iter_scores(conn: sqlite3.Connection, experiment_id: uuid.UUID) -> Iterator[tuple[Any, ...]]:
    """Per stored result (or per run without results), in data order: position, whether
    the run failed, latency, then key, score, whether it errored, its usage and its
    evaluator info (JSON)."""
    yield from conn.execute(
        "SELECT u.position, u.error IS NOT NULL, u.latency_ms, u.id, r.key, r.score, "
        "r.error IS NOT NULL, json_extract(r.metadata, '$.usage'), r.evaluator_info "
        "FROM runs u LEFT JOIN results r ON r.run_id = u.id WHERE u.experiment_id = ? "
        "ORDER BY u.position, u.repetition, r.pk",
        (str(experiment_id),),
    )


# stored figures
def write_stats(conn: sqlite3.Connection, experiment_id: uuid.UUID, stats: ExperimentStats) -> None:
    exp = str(experiment_id)
    conn.execute(
        "INSERT INTO experiment_stats (experiment_id, row_count, run_errors, latency_n, "
        "latency_sum, latency_max, usage, final) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (experiment_id) DO UPDATE SET row_count = excluded.row_count, "
        "run_errors = excluded.run_errors, latency_n = excluded.latency_n, "
        "latency_sum = excluded.latency_sum, latency_max = excluded.latency_max, "
        "usage = excluded.usage, final = excluded.final",
        (
            exp,
            stats.rows,
            stats.run_errors,
            stats.latency_n,
            stats.latency_sum,
            stats.latency_max,
            dumps(stats.usage or None),
            int(stats.final),
        ),
    )
    if stats.metrics is None:
        return
    conn.execute("DELETE FROM metric_stats WHERE experiment_id = ?", (exp,))
    conn.executemany(
        "INSERT INTO metric_stats (experiment_id, ordinal, key, mean, n, errors, unscored, "
        "stderr, ci_low, ci_high, min, max, histogram, skipped, ci_method, direction, score_range, binary) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                exp,
                ordinal,
                codec.text(m.key),  # as the results table stores it: lone surrogates escaped
                m.mean,
                m.n,
                m.errors,
                m.unscored,
                m.stderr,
                m.ci_low,
                m.ci_high,
                m.min,
                m.max,
                dumps(m.histogram),
                m.skipped,
                m.ci_method,
                m.direction,
                dumps(list(m.score_range)) if m.score_range is not None else None,
                int(m.binary),
            )
            for ordinal, m in enumerate(stats.metrics)
        ],
    )


def load_stats(conn: sqlite3.Connection, experiment_id: uuid.UUID) -> ExperimentStats | None:
    exp = str(experiment_id)
    row = conn.execute("SELECT * FROM experiment_stats WHERE experiment_id = ?", (exp,)).fetchone()
    if row is None:
        return None
    metrics = [
        MetricStats(
            key=m["key"],
            mean=m["mean"],
            n=m["n"],
            errors=m["errors"],
            unscored=m["unscored"],
            stderr=m["stderr"],
            ci_low=m["ci_low"],
            ci_high=m["ci_high"],
            min=m["min"],
            max=m["max"],
            histogram=loads(m["histogram"]) or [],
            skipped=m["skipped"],
            ci_method=m["ci_method"],
            direction=m["direction"],
            score_range=tuple(loads(m["score_range"])) if m["score_range"] else None,
            binary=bool(m["binary"]),
        )
        for m in conn.execute("SELECT * FROM metric_stats WHERE experiment_id = ? ORDER BY ordinal", (exp,))
    ]
    return ExperimentStats(
        rows=row["row_count"],
        run_errors=row["run_errors"],
        latency_n=row["latency_n"],
        latency_sum=row["latency_sum"],
        latency_max=row["latency_max"],
        usage=loads(row["usage"]) or {},
        metrics=metrics,
        final=bool(row["final"]),
    )


# examples
def examples_page(
    conn: sqlite3.Connection,
    dataset_id: uuid.UUID,
    version: int | None,
    after_position: int,
    limit: int,
) -> list[tuple[Any, ...]]:
    """Examples alive at ``version`` after ``after_position``, in position order, as
    plain tuples of ``codec.EXAMPLE_FIELDS`` (a feed reads every example of a run: a
    tuple's fields by place cost a fraction of ``sqlite3.Row``'s by name)."""
    alive, alive_params = examples_alive(version)
    cursor: Any = conn
    if isinstance(conn, sqlite3.Connection):  # PostgreSQL's rows are tuples already
        cursor = conn.cursor()
        cursor.row_factory = None
    return cursor.execute(  # type: ignore[no-any-return]
        f"SELECT {codec.EXAMPLE_FIELDS} FROM examples e WHERE e.dataset_id = ? AND {alive} "
        "AND e.position > ? ORDER BY e.position LIMIT ?",
        (str(dataset_id), *alive_params, after_position, limit),
    ).fetchall()
