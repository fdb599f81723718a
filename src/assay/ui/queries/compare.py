"""Two or more experiments on one dataset, aligned by (example, repetition).

The first experiment is the baseline. For each metric a row of another experiment is a
regression when it scores lower than the baseline's row, or its evaluator failed where
the baseline's did not; an improvement the other way round. Without a metric filter, a
target call that fails where the baseline's succeeded is a regression too. Classifying
and filtering happen in SQL, so only the requested page of rows is read.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from assay.ui.db import ReadOnlyDatabase
from assay.ui.errors import BadRequest
from assay.ui.models import (
    Change,
    CompareCell,
    CompareMetric,
    ComparePage,
    CompareRow,
    CompareShow,
    ExperimentSummary,
    ScoreCell,
)
from assay.ui.queries._sql import PREVIEW_SOURCE_CHARS, in_list, offset, preview
from assay.ui.queries.rows import reference_previews, score_cells

__all__ = ["EPSILON", "MAX_EXPERIMENTS", "cell_changes", "check_comparable", "compare_page"]


EPSILON = 1e-9
MAX_EXPERIMENTS = 8

_SHOW = {
    "all": "1 = 1",
    "regressions": "c.worse = 1",
    "improvements": "c.better = 1",
    "changed": "(c.worse = 1 OR c.better = 1)",
}


def _judged_sql(others: int, by_metric: bool) -> str:
    """CTE ``judged``: per baseline run (its rowid), other experiment and metric key, whether
    the other's aligned run did worse or better. Runs align through the (experiment,
    example, repetition) index; several results under one key are averaged."""
    key_clause = "AND rb.key = ?" if by_metric else ""
    return f"""
    pairs AS (
        SELECT b.rowid AS brow, o.experiment_id AS other, rb.key AS key,
               AVG(CASE WHEN rb.error IS NULL THEN rb.score END) AS bs,
               MAX(rb.error IS NOT NULL) AS be,
               AVG(CASE WHEN ro.error IS NULL THEN ro.score END) AS os,
               MAX(ro.error IS NOT NULL) AS oe
        FROM runs b
        JOIN runs o ON o.experiment_id IN ({", ".join("?" * others)})
             AND o.example_id = b.example_id AND o.repetition = b.repetition
        JOIN results rb ON rb.run_id = b.id {key_clause}
        JOIN results ro ON ro.run_id = o.id AND ro.key = rb.key
        WHERE b.experiment_id = ?
        GROUP BY b.rowid, o.rowid, rb.key
    ),
    judged AS (
        SELECT brow, other, key,
               CASE WHEN (oe AND NOT be) OR os < bs - {EPSILON} THEN 1 ELSE 0 END AS worse,
               CASE WHEN (be AND NOT oe AND os IS NOT NULL) OR os > bs + {EPSILON}
                    THEN 1 ELSE 0 END AS better
        FROM pairs
    )"""


def _judged_params(ids: list[str], metric: str | None) -> list[Any]:
    return [*ids[1:], *([metric] if metric is not None else []), ids[0]]


def _run_changes_sql(others: int) -> str:
    return f"""
    runchange AS (
        SELECT b.rowid AS brow,
               MAX(o.error IS NOT NULL AND b.error IS NULL) AS worse,
               MAX(b.error IS NOT NULL AND o.error IS NULL) AS better
        FROM runs b JOIN runs o ON o.experiment_id IN ({", ".join("?" * others)})
             AND o.example_id = b.example_id AND o.repetition = b.repetition
        WHERE b.experiment_id = ?
        GROUP BY b.rowid
    ),"""


def compare_page(
    db: ReadOnlyDatabase,
    experiments: list[ExperimentSummary],
    *,
    show: CompareShow,
    metric: str | None,
    page: int,
    per_page: int,
) -> ComparePage:
    check_comparable(experiments)
    baseline, ids = experiments[0], [e.id for e in experiments]
    keys = _metric_keys(db, ids)
    if metric is not None and metric not in keys:
        known = ", ".join(keys)
        raise BadRequest(f"unknown metric {metric!r}; these experiments' metrics: {known}")
    total, changes = _changed_rows(db, ids, show=show, metric=metric, page=page, per_page=per_page)
    return ComparePage(
        experiments=experiments,
        baseline_id=baseline.id,
        metric_keys=keys,
        metrics=_metrics(db, ids, keys),
        show=show,
        metric=metric,
        total=total,
        page=page,
        per_page=per_page,
        rows=_rows(db, experiments, changes, metric),
    )


def check_comparable(experiments: list[ExperimentSummary]) -> None:
    if len(experiments) < 2:
        raise BadRequest("compare needs at least two experiments (repeat the 'e' parameter)")
    if len(experiments) > MAX_EXPERIMENTS:
        raise BadRequest(f"compare shows at most {MAX_EXPERIMENTS} experiments at once")
    if len({e.id for e in experiments}) != len(experiments):
        raise BadRequest("compare got the same experiment twice")
    datasets = {e.dataset_id for e in experiments}
    if len(datasets) != 1 or None in datasets:
        names = ", ".join(f"{e.name!r} (dataset {e.dataset_name or 'none'})" for e in experiments)
        raise BadRequest(f"compared experiments must run on one dataset; got {names}")


def _metric_keys(db: ReadOnlyDatabase, ids: list[str]) -> list[str]:
    marks, params = in_list(ids)
    rows = db.query(
        f"SELECT key FROM results WHERE experiment_id IN {marks} GROUP BY key ORDER BY MIN(pk)",
        params,
    )
    return [row["key"] for row in rows]


def _changed_rows(
    db: ReadOnlyDatabase,
    ids: list[str],
    *,
    show: CompareShow,
    metric: str | None,
    page: int,
    per_page: int,
) -> tuple[int, list[dict[str, Any]]]:
    """The baseline's rows on this page with their overall change, and how many match."""
    by_metric = metric is not None
    params: list[Any] = []  # in the order the CTEs appear in the SQL text
    run_cte, run_join, run_worse, run_better = "", "", "0", "0"
    if not by_metric:
        run_cte = _run_changes_sql(len(ids) - 1)
        params += [*ids[1:], ids[0]]
        run_join = "LEFT JOIN runchange k ON k.brow = u.rowid"
        run_worse, run_better = "COALESCE(k.worse, 0)", "COALESCE(k.better, 0)"
    params += _judged_params(ids, metric)
    matching = f"""
    WITH {run_cte} {_judged_sql(len(ids) - 1, by_metric)},
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
    SELECT c.*, COUNT(*) OVER () AS total FROM c WHERE {_SHOW[show]}"""
    params.append(ids[0])
    rows = db.query(
        f"{matching} ORDER BY c.position, c.repetition LIMIT ? OFFSET ?",
        [*params, per_page, offset(page, per_page)],
    )
    if rows:
        return int(rows[0]["total"]), [dict(row) for row in rows]
    # A page past the end holds no row to carry the total: count apart.
    total = db.query(f"SELECT COUNT(*) FROM ({matching})", params)[0][0] if page > 1 else 0
    return int(total), []


def _metrics(db: ReadOnlyDatabase, ids: list[str], keys: list[str]) -> list[CompareMetric]:
    marks, params = in_list(ids)
    means: dict[str, dict[str, float | None]] = defaultdict(dict)
    errors: dict[str, dict[str, int]] = defaultdict(dict)
    for row in db.query(
        "SELECT experiment_id, key, AVG(CASE WHEN error IS NULL THEN score END) AS mean, "
        f"SUM(error IS NOT NULL) AS errors FROM results WHERE experiment_id IN {marks} "
        "GROUP BY experiment_id, key",
        params,
    ):
        means[row["key"]][row["experiment_id"]] = row["mean"]
        errors[row["key"]][row["experiment_id"]] = int(row["errors"])
    worse: dict[str, dict[str, int]] = defaultdict(dict)
    better: dict[str, dict[str, int]] = defaultdict(dict)
    for row in db.query(
        f"WITH {_judged_sql(len(ids) - 1, False)} "
        "SELECT key, other, SUM(worse) AS worse, SUM(better) AS better FROM judged "
        "GROUP BY key, other",
        _judged_params(ids, None),
    ):
        worse[row["key"]][row["other"]] = int(row["worse"])
        better[row["key"]][row["other"]] = int(row["better"])
    return [_metric(key, ids, means[key], errors[key], worse[key], better[key]) for key in keys]


def _metric(
    key: str,
    ids: list[str],
    means: dict[str, float | None],
    errors: dict[str, int],
    worse: dict[str, int],
    better: dict[str, int],
) -> CompareMetric:
    base = means.get(ids[0])
    deltas = {exp: _delta(means.get(exp), base) for exp in ids[1:]}
    return CompareMetric(
        key=key,
        means={exp: means.get(exp) for exp in ids},
        errors={exp: errors.get(exp, 0) for exp in ids},
        deltas=deltas,
        regressions={exp: worse.get(exp, 0) for exp in ids[1:]},
        improvements={exp: better.get(exp, 0) for exp in ids[1:]},
    )


def _delta(value: float | None, base: float | None) -> float | None:
    return None if value is None or base is None else value - base


def _rows(
    db: ReadOnlyDatabase,
    experiments: list[ExperimentSummary],
    changes: list[dict[str, Any]],
    metric: str | None,
) -> list[CompareRow]:
    example_ids = sorted({row["example_id"] for row in changes})
    runs = _runs_of(db, [e.id for e in experiments], example_ids)
    scores = score_cells(db, [run["id"] for run in runs.values()])
    references = reference_previews(db, experiments[0], example_ids)
    rows = []
    for change in changes:
        row_key = (change["example_id"], change["repetition"])
        cells = [_cell(e.id, runs.get((e.id, *row_key)), scores) for e in experiments]
        for cell in cells[1:]:
            cell.changes = cell_changes(cells[0], cell, metric)
        rows.append(
            CompareRow(
                example_id=change["example_id"],
                repetition=change["repetition"],
                position=change["position"],
                inputs=preview(change["inputs"]),
                reference=references.get(change["example_id"], ""),
                change=_overall(bool(change["worse"]), bool(change["better"])),
                cells=cells,
            )
        )
    return rows


def _runs_of(db: ReadOnlyDatabase, ids: list[str], example_ids: list[str]) -> dict[tuple[str, str, int], Any]:
    exp_marks, exp_params = in_list(ids)
    ex_marks, ex_params = in_list(example_ids)
    rows = db.query(
        f"SELECT id, experiment_id, example_id, repetition, error, "
        f"substr(outputs, 1, {PREVIEW_SOURCE_CHARS}) AS outputs FROM runs "
        f"WHERE experiment_id IN {exp_marks} AND example_id IN {ex_marks}",
        [*exp_params, *ex_params],
    )
    return {(row["experiment_id"], row["example_id"], row["repetition"]): row for row in rows}


def _cell(experiment_id: str, run: Any, scores: dict[str, list[ScoreCell]]) -> CompareCell:
    if run is None:
        return CompareCell(experiment_id=experiment_id, scores=[])
    return CompareCell(
        experiment_id=experiment_id,
        run_id=run["id"],
        outputs=preview(run["outputs"]),
        error=run["error"],
        scores=scores.get(run["id"], []),
    )


def cell_changes(base: CompareCell, other: CompareCell, metric: str | None) -> dict[str, Change]:
    """Per metric, how ``other`` fares against the baseline (the rule the SQL applies)."""
    base_scores, other_scores = _by_key(base.scores), _by_key(other.scores)
    changes: dict[str, Change] = {}
    for key, (score, errored) in other_scores.items():
        if key not in base_scores or (metric is not None and key != metric):
            continue
        base_score, base_errored = base_scores[key]
        worse = (errored and not base_errored) or (
            score is not None and base_score is not None and score < base_score - EPSILON
        )
        better = (base_errored and not errored and score is not None) or (
            score is not None and base_score is not None and score > base_score + EPSILON
        )
        changes[key] = _overall(worse, better)
    return changes


def _by_key(cells: list[ScoreCell]) -> dict[str, tuple[float | None, bool]]:
    grouped: dict[str, list[ScoreCell]] = defaultdict(list)
    for cell in cells:
        grouped[cell.key].append(cell)
    result = {}
    for key, group in grouped.items():
        scored = [c.score for c in group if c.error is None and c.score is not None]
        mean = sum(scored) / len(scored) if scored else None
        result[key] = (mean, any(c.error is not None for c in group))
    return result


def _overall(worse: bool, better: bool) -> Change:
    if worse and better:
        return "mixed"
    return "regressed" if worse else "improved" if better else "same"
