"""Rows of other experiments against a baseline's, aligned by (example, repetition): for
each metric a row of another experiment did worse when it scores worse than the
baseline's row (lower, or higher for a lower-is-better metric), or its evaluator failed
where the baseline's did not; better the other way round. Without a metric, a target
call that fails where the baseline's succeeded is worse too. Classifying and filtering
happen in SQL, so only the requested page of rows is read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.figures import finished_with_figures
from assay.store.read.sql import PREVIEW_SOURCE_CHARS, in_list, records

__all__ = [
    "EPSILON",
    "SHOWS",
    "CellRun",
    "ChangedRow",
    "MetricFigure",
    "changed_rows",
    "metric_figures",
    "metric_keys",
    "pair_counts",
    "runs_of",
]

EPSILON = 1e-9

SHOWS = {
    "all": "1 = 1",
    "regressions": "c.worse = 1",
    "improvements": "c.better = 1",
    "changed": "(c.worse = 1 OR c.better = 1)",
}
"""Which of the baseline's rows a page keeps: all, or those where another experiment
did worse, better, or either."""


@dataclass(frozen=True, slots=True)
class ChangedRow:
    """A baseline row (its inputs cut at ``PREVIEW_SOURCE_CHARS``) and whether another
    experiment did worse or better on it."""

    example_id: str
    repetition: int
    position: int
    inputs: str | None
    worse: int
    better: int


@dataclass(frozen=True, slots=True)
class CellRun:
    """An experiment's run on a row, its outputs cut at ``PREVIEW_SOURCE_CHARS``."""

    id: str
    experiment_id: str
    example_id: str
    repetition: int
    error: str | None
    outputs: str | None


@dataclass(frozen=True, slots=True)
class MetricFigure:
    experiment_id: str
    key: str
    mean: float | None
    errors: int


def _judged_sql(others: int, by_metric: bool, lower: int, restrict: str = "") -> str:
    """CTE ``judged``: per baseline run (its rowid), other experiment and metric key, whether
    the other's aligned run did worse or better. Runs align through the (experiment,
    example, repetition) index; several results under one key are averaged. Scores of the
    ``lower`` lower-is-better keys are negated, so "worse" always means "less good".
    ``restrict`` narrows the baseline runs (e.g. to one page's rows)."""
    key_clause = "AND rb.key = ?" if by_metric else ""
    sign = f"(CASE WHEN rb.key IN ({', '.join('?' * lower)}) THEN -1.0 ELSE 1.0 END)" if lower else "1.0"
    return f"""
    pairs AS (
        SELECT b.rowid AS brow, o.experiment_id AS other, rb.key AS key,
               {sign} * AVG(CASE WHEN rb.error IS NULL THEN rb.score END) AS bs,
               MAX(rb.error IS NOT NULL) AS be,
               {sign} * AVG(CASE WHEN ro.error IS NULL THEN ro.score END) AS os,
               MAX(ro.error IS NOT NULL) AS oe
        FROM runs b
        JOIN runs o ON o.experiment_id IN ({", ".join("?" * others)})
             AND o.example_id = b.example_id AND o.repetition = b.repetition
        JOIN results rb ON rb.run_id = b.id {key_clause}
        JOIN results ro ON ro.run_id = o.id AND ro.key = rb.key
        WHERE b.experiment_id = ? {restrict}
        GROUP BY b.rowid, o.rowid, rb.key
    ),
    judged AS (
        SELECT brow, other, key,
               CASE WHEN (oe = 1 AND be = 0) OR os < bs - {EPSILON} THEN 1 ELSE 0 END AS worse,
               CASE WHEN (be = 1 AND oe = 0 AND os IS NOT NULL) OR os > bs + {EPSILON}
                    THEN 1 ELSE 0 END AS better
        FROM pairs
    )"""


def _judged_params(ids: list[str], metric: str | None, lower: list[str]) -> list[Any]:
    """In the order the marks appear in ``_judged_sql``'s text."""
    return [*lower, *lower, *ids[1:], *([metric] if metric is not None else []), ids[0]]


# Per metric and other experiment, how many rows did worse or better than the baseline's
# (the rule of ``_judged_sql``): the baseline's results in example order from the pair
# index, each paired with the other's by a lookup there. Only a result without a score
# is looked up in the table, to tell an error from a skipped one.
_ERRORED = "(SELECT CASE WHEN e.error IS NULL THEN 0 ELSE 1 END FROM results e WHERE e.pk = {alias}.pk)"
_PAIR_COUNTS = f"""
    SELECT SUM(CASE WHEN (oe = 1 AND be = 0) OR os < bs - {EPSILON} THEN 1 ELSE 0 END) AS worse,
           SUM(CASE WHEN (be = 1 AND oe = 0 AND os IS NOT NULL) OR os > bs + {EPSILON}
               THEN 1 ELSE 0 END) AS better
    FROM (SELECT ? * rb.score AS bs, ? * ro.score AS os,
                 CASE WHEN rb.score IS NULL THEN {_ERRORED.format(alias="rb")} ELSE 0 END AS be,
                 CASE WHEN ro.score IS NULL THEN {_ERRORED.format(alias="ro")} ELSE 0 END AS oe
          FROM results rb
          JOIN results ro ON ro.experiment_id = ? AND ro.key = ?
               AND ro.example_id = rb.example_id AND ro.repetition = rb.repetition
          WHERE rb.experiment_id = ? AND rb.key = ?) p
"""


def _run_changes_sql(others: int, restrict: str = "") -> str:
    # With a page's rows to restrict to, the baseline's runs are found by rowid: the
    # experiment term is kept off its index (``|| ''``), else the planner walks all its runs.
    experiment = "b.experiment_id || ''" if restrict else "b.experiment_id"
    return f"""
    runchange AS (
        SELECT b.rowid AS brow,
               MAX(o.error IS NOT NULL AND b.error IS NULL) AS worse,
               MAX(b.error IS NOT NULL AND o.error IS NULL) AS better
        FROM runs b JOIN runs o ON o.experiment_id IN ({", ".join("?" * others)})
             AND o.example_id = b.example_id AND o.repetition = b.repetition
        WHERE {experiment} = ? {restrict}
        GROUP BY b.rowid
    ),"""


def pair_counts(db: ReadOnlyDatabase, baseline: str, other: str, key: str, *, sign: float) -> tuple[int, int]:
    """How many rows of ``other`` did worse and better than the baseline's on ``key``
    (``sign`` -1.0: lower is better), one repetition per row."""
    row = db.query(_PAIR_COUNTS, (sign, sign, other, key, baseline, key))[0]
    return int(row["worse"] or 0), int(row["better"] or 0)


def metric_keys(db: ReadOnlyDatabase, ids: list[str]) -> list[str]:
    """The experiments' metric keys in first-seen order (stored, else index-only)."""
    if finished_with_figures(db, ids):  # first-seen order: by experiment, then ordinal
        keys: dict[str, None] = {}
        for experiment_id in ids:
            for row in db.query(
                "SELECT key FROM metric_stats WHERE experiment_id = ? ORDER BY ordinal", (experiment_id,)
            ):
                keys.setdefault(row["key"], None)
        return list(keys)
    marks, params = in_list(ids)
    rows = db.query(
        f"SELECT key FROM results WHERE experiment_id IN {marks} GROUP BY key ORDER BY MIN(pk)", params
    )
    return [row["key"] for row in rows]


def metric_figures(db: ReadOnlyDatabase, ids: list[str]) -> list[MetricFigure]:
    """Each experiment's mean and errors per metric (stored, else counted)."""
    marks, params = in_list(ids)
    figures = (
        f"SELECT experiment_id, key, mean, errors FROM metric_stats WHERE experiment_id IN {marks}"
        if finished_with_figures(db, ids)
        else "SELECT experiment_id, key, AVG(CASE WHEN error IS NULL THEN score END) AS mean, "
        f"SUM(error IS NOT NULL) AS errors FROM results WHERE experiment_id IN {marks} "
        "GROUP BY experiment_id, key"
    )
    return records(MetricFigure, db.query(figures, params))


def changed_rows(
    db: ReadOnlyDatabase,
    ids: list[str],
    *,
    show: str,
    metric: str | None,
    limit: int,
    offset: int,
    lower: list[str],
) -> tuple[int, list[ChangedRow]]:
    """The baseline's (``ids[0]``) rows that ``show`` keeps (a key of ``SHOWS``) against
    the others, a page of them in data order, and how many there are; on ``metric``
    only when given (``lower``: the lower-is-better keys)."""
    if show == "all":
        return _all_rows(db, ids, metric=metric, limit=limit, offset=offset, lower=lower)
    by_metric = metric is not None
    params: list[Any] = []  # in the order the CTEs appear in the SQL text
    run_cte, run_join, run_worse, run_better = "", "", "0", "0"
    if not by_metric:
        run_cte = _run_changes_sql(len(ids) - 1)
        params += [*ids[1:], ids[0]]
        run_join = "LEFT JOIN runchange k ON k.brow = u.rowid"
        run_worse, run_better = "COALESCE(k.worse, 0)", "COALESCE(k.better, 0)"
    params += _judged_params(ids, metric, lower)
    matching = f"""
    WITH {run_cte} {_judged_sql(len(ids) - 1, by_metric, len(lower))},
    rowchange AS (SELECT brow, MAX(worse) AS worse, MAX(better) AS better FROM judged
                  GROUP BY brow),
    c AS (
        SELECT u.example_id, u.repetition, u.position,
               substr(u.inputs, 1, {PREVIEW_SOURCE_CHARS}) AS inputs,
               MAX(COALESCE(p.worse, 0), {run_worse}) AS worse,
               MAX(COALESCE(p.better, 0), {run_better}) AS better
        FROM runs u
        LEFT JOIN rowchange p ON p.brow = u.rowid
        {run_join}
        WHERE u.experiment_id = ?
    )
    SELECT c.*, COUNT(*) OVER () AS total FROM c WHERE {SHOWS[show]}"""
    params.append(ids[0])
    rows = db.query(
        f"{matching} ORDER BY c.position, c.repetition LIMIT ? OFFSET ?", [*params, limit, offset]
    )
    if rows:
        return int(rows[0]["total"]), records(ChangedRow, rows)
    # A page past the end holds no row to carry the total: count apart.
    total = db.query(f"SELECT COUNT(*) FROM ({matching})", params)[0][0] if offset > 0 else 0
    return int(total), []


def _all_rows(
    db: ReadOnlyDatabase,
    ids: list[str],
    *,
    metric: str | None,
    limit: int,
    offset: int,
    lower: list[str],
) -> tuple[int, list[ChangedRow]]:
    """Every baseline row, a page at a time: the page's runs by position, then the
    changes of those runs only (the cost of a page, not of the experiment)."""
    total = _row_count(db, ids[0])
    runs = db.query(
        f"SELECT rowid AS brow, example_id, repetition, position, "
        f"substr(inputs, 1, {PREVIEW_SOURCE_CHARS}) AS inputs FROM runs "
        "WHERE experiment_id = ? ORDER BY position, repetition LIMIT ? OFFSET ?",
        (ids[0], limit, offset),
    )
    if not runs:
        return int(total), []
    marks, rowids = in_list([run["brow"] for run in runs])
    restrict = f"AND b.rowid IN {marks}"
    worse: dict[int, int] = defaultdict(int)
    better: dict[int, int] = defaultdict(int)
    judged = f"WITH {_judged_sql(len(ids) - 1, metric is not None, len(lower), restrict)} "
    params = _judged_params(ids, metric, lower)
    for row in db.query(
        judged + "SELECT brow, MAX(worse) AS worse, MAX(better) AS better FROM judged GROUP BY brow",
        [*params, *rowids],
    ):
        worse[row["brow"]], better[row["brow"]] = int(row["worse"]), int(row["better"])
    if metric is None:
        for row in db.query(
            f"WITH {_run_changes_sql(len(ids) - 1, restrict).rstrip().rstrip(',')} "
            "SELECT brow, worse, better FROM runchange",
            [*ids[1:], ids[0], *rowids],
        ):
            worse[row["brow"]] = max(worse[row["brow"]], int(row["worse"] or 0))
            better[row["brow"]] = max(better[row["brow"]], int(row["better"] or 0))
    return int(total), [
        ChangedRow(
            run["example_id"],
            run["repetition"],
            run["position"],
            run["inputs"],
            worse[run["brow"]],
            better[run["brow"]],
        )
        for run in runs
    ]


def _row_count(db: ReadOnlyDatabase, experiment_id: str) -> int:
    """The baseline's rows: as stored when it finished, else counted."""
    stored = db.query_one(
        "SELECT row_count FROM experiment_stats WHERE experiment_id = ? AND final = 1", (experiment_id,)
    )
    if stored is not None:
        return int(stored[0])
    return int(db.query("SELECT COUNT(*) FROM runs WHERE experiment_id = ?", (experiment_id,))[0][0])


def runs_of(
    db: ReadOnlyDatabase, ids: list[str], example_ids: list[str]
) -> dict[tuple[str, str, int], CellRun]:
    """The experiments' runs on these examples, by (experiment, example, repetition)."""
    if not example_ids:
        return {}
    exp_marks, exp_params = in_list(ids)
    ex_marks, ex_params = in_list(example_ids)
    rows = db.query(
        f"SELECT id, experiment_id, example_id, repetition, error, "
        f"substr(outputs, 1, {PREVIEW_SOURCE_CHARS}) AS outputs FROM runs "
        f"WHERE experiment_id IN {exp_marks} AND example_id IN {ex_marks}",
        [*exp_params, *ex_params],
    )
    return {(run.experiment_id, run.example_id, run.repetition): run for run in records(CellRun, rows)}
