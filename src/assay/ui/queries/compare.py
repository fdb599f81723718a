"""Two or more experiments on one dataset, aligned by (example, repetition).

The first experiment is the baseline. Per metric, each other experiment gets the paired
statistics of ``assay.compare`` (difference, 95% CI, p-value, Holm, MDE, verdict). For
each metric a row of another experiment is a regression when it scores worse than the
baseline's row (lower, or higher for a lower-is-better metric), or its evaluator failed
where the baseline's did not; an improvement the other way round. Without a metric filter, a
target call that fails where the baseline's succeeded is a regression too. Classifying
and filtering happen in SQL, so only the requested page of rows is read.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from assay._metric import Direction, MetricInfo
from assay.comparison import comparability
from assay.comparison._compare import compare_experiments
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.pairing import METRIC_INFO_SQL, decode_metric_info
from assay.ui.errors import BadRequest
from assay.ui.models import (
    Change,
    CompareCell,
    CompareMetric,
    ComparePage,
    CompareRow,
    CompareShow,
    ExperimentSummary,
    PairedStat,
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
    directions = _directions(db, ids, keys)
    lower = [key for key in keys if directions[key] == "lower"]
    total, changes = _changed_rows(
        db, ids, show=show, metric=metric, page=page, per_page=per_page, lower=lower
    )
    paired, notes, row_changes = paired_statistics(db, experiments)
    counted = {
        (key, other): counts
        for (key, other, direction), counts in row_changes.items()
        if direction == directions.get(key)  # read the same way as the page reads it
    }
    metrics = _metrics(db, ids, keys, lower, counted)
    for m in metrics:
        m.direction = directions[m.key]
        m.paired = paired.get(m.key, {})
    return ComparePage(
        experiments=experiments,
        notes=notes,
        baseline_id=baseline.id,
        metric_keys=keys,
        metrics=metrics,
        show=show,
        metric=metric,
        total=total,
        page=page,
        per_page=per_page,
        rows=_rows(db, experiments, changes, metric, set(lower)),
    )


RowChanges = dict[tuple[str, str, str], tuple[int, int]]  # (key, other, direction) -> (worse, better)


def paired_statistics(
    db: ReadOnlyDatabase, experiments: list[ExperimentSummary]
) -> tuple[dict[str, dict[str, PairedStat]], dict[str, list[str]], RowChanges]:
    """Per metric key and other experiment, its paired comparison with the baseline; per
    other experiment, the notes on what made its comparison partial; and the counts of
    rows that did worse and better, where the comparison counted them."""
    baseline = experiments[0]
    stats: dict[str, dict[str, PairedStat]] = defaultdict(dict)
    notes: dict[str, list[str]] = {}
    changes: RowChanges = {}
    for other in experiments[1:]:
        try:
            comparison = compare_experiments(db.conn, baseline, other)
        except comparability.NotComparableError as exc:  # e.g. no shared metric
            notes[other.id] = [str(exc)]
            continue
        notes[other.id] = comparison.warnings
        for m in comparison.metrics:
            if m.rows_worse is not None and m.rows_better is not None:
                changes[(m.key, other.id, m.direction)] = (m.rows_worse, m.rows_better)
            stats[m.key][other.id] = PairedStat(
                mean_a=m.mean_a,
                mean_b=m.mean_b,
                difference=m.difference,
                ci_low=m.ci95[0] if m.ci95 else None,
                ci_high=m.ci95[1] if m.ci95 else None,
                ci_method=m.interval.method if m.interval else None,
                p_value=m.p_value,
                p_holm=m.p_holm,
                test=m.test,
                mde=m.mde,
                n_paired=m.n_paired,
                only_a=m.only_a,
                only_b=m.only_b,
                verdict=m.verdict,
                improving=None if not m.difference else MetricInfo(m.direction).is_improvement(m.difference),
            )
    return dict(stats), notes, changes


def _directions(db: ReadOnlyDatabase, ids: list[str], keys: list[str]) -> dict[str, Direction]:
    """Each metric's direction as its first experiment that declares one says."""
    directions = {}
    for key in keys:
        info = MetricInfo()
        for experiment_id in ids:
            info = MetricInfo.of(decode_metric_info(db.query_one(METRIC_INFO_SQL, (experiment_id, key))))
            if info.declared:
                break
        directions[key] = info.direction
    return directions


def check_comparable(experiments: list[ExperimentSummary]) -> None:
    if len(experiments) < 2:
        raise BadRequest("compare needs at least two experiments (repeat the 'e' parameter)")
    if len(experiments) > MAX_EXPERIMENTS:
        raise BadRequest(f"compare shows at most {MAX_EXPERIMENTS} experiments at once")
    try:
        comparability.check_comparable(experiments)
    except comparability.NotComparableError as exc:
        raise BadRequest(str(exc)) from None


def _finished_with_figures(db: ReadOnlyDatabase, ids: list[str]) -> bool:
    """Whether every experiment ended and stored its figures (then no scan is needed)."""
    marks, params = in_list(ids)
    found = db.query(
        f"SELECT COUNT(*) FROM experiment_stats WHERE final = 1 AND experiment_id IN {marks}", params
    )[0][0]
    return int(found) == len(set(ids))


def _metric_keys(db: ReadOnlyDatabase, ids: list[str]) -> list[str]:
    marks, params = in_list(ids)
    if _finished_with_figures(db, ids):  # first-seen order: by experiment, then ordinal
        keys: dict[str, None] = {}
        for experiment_id in ids:
            for row in db.query(
                "SELECT key FROM metric_stats WHERE experiment_id = ? ORDER BY ordinal", (experiment_id,)
            ):
                keys.setdefault(row["key"], None)
        return list(keys)
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
    lower: list[str],
) -> tuple[int, list[dict[str, Any]]]:
    """The baseline's rows on this page with their overall change, and how many match."""
    if show == "all":
        return _all_rows(db, ids, metric=metric, page=page, per_page=per_page, lower=lower)
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


def _all_rows(
    db: ReadOnlyDatabase,
    ids: list[str],
    *,
    metric: str | None,
    page: int,
    per_page: int,
    lower: list[str],
) -> tuple[int, list[dict[str, Any]]]:
    """Every baseline row, a page at a time: the page's runs by position, then the
    changes of those runs only (the cost of a page, not of the experiment)."""
    total = _row_count(db, ids[0])
    runs = db.query(
        f"SELECT rowid AS brow, example_id, repetition, position, "
        f"substr(inputs, 1, {PREVIEW_SOURCE_CHARS}) AS inputs FROM runs "
        "WHERE experiment_id = ? ORDER BY position, repetition LIMIT ? OFFSET ?",
        (ids[0], per_page, offset(page, per_page)),
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
        {**dict(run), "worse": worse[run["brow"]], "better": better[run["brow"]]} for run in runs
    ]


def _row_count(db: ReadOnlyDatabase, experiment_id: str) -> int:
    """The baseline's rows: as stored when it finished, else counted."""
    stored = db.query_one(
        "SELECT row_count FROM experiment_stats WHERE experiment_id = ? AND final = 1", (experiment_id,)
    )
    if stored is not None:
        return int(stored[0])
    return int(db.query("SELECT COUNT(*) FROM runs WHERE experiment_id = ?", (experiment_id,))[0][0])


def _metrics(
    db: ReadOnlyDatabase,
    ids: list[str],
    keys: list[str],
    lower: list[str],
    known: dict[tuple[str, str], tuple[int, int]],
) -> list[CompareMetric]:
    """Means, errors and per-row change counts; ``known`` holds the counts the paired
    comparison already made in its own pass."""
    marks, params = in_list(ids)
    means: dict[str, dict[str, float | None]] = defaultdict(dict)
    errors: dict[str, dict[str, int]] = defaultdict(dict)
    figures = (
        f"SELECT experiment_id, key, mean, errors FROM metric_stats WHERE experiment_id IN {marks}"
        if _finished_with_figures(db, ids)
        else "SELECT experiment_id, key, AVG(CASE WHEN error IS NULL THEN score END) AS mean, "
        f"SUM(error IS NOT NULL) AS errors FROM results WHERE experiment_id IN {marks} "
        "GROUP BY experiment_id, key"
    )
    for row in db.query(figures, params):
        means[row["key"]][row["experiment_id"]] = row["mean"]
        errors[row["key"]][row["experiment_id"]] = int(row["errors"])
    worse: dict[str, dict[str, int]] = defaultdict(dict)
    better: dict[str, dict[str, int]] = defaultdict(dict)
    for key in keys:
        sign = -1.0 if key in lower else 1.0
        for other in ids[1:]:
            if (key, other) in known:
                worse[key][other], better[key][other] = known[(key, other)]
                continue
            row = db.query(_PAIR_COUNTS, (sign, sign, other, key, ids[0], key))[0]
            worse[key][other], better[key][other] = int(row["worse"] or 0), int(row["better"] or 0)
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
    lower: set[str],
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
            cell.changes = cell_changes(cells[0], cell, metric, lower)
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


def cell_changes(
    base: CompareCell, other: CompareCell, metric: str | None, lower: frozenset[str] | set[str] = frozenset()
) -> dict[str, Change]:
    """Per metric, how ``other`` fares against the baseline (the rule the SQL applies)."""
    base_scores, other_scores = _by_key(base.scores), _by_key(other.scores)
    changes: dict[str, Change] = {}
    for key, (score, errored) in other_scores.items():
        if key not in base_scores or (metric is not None and key != metric):
            continue
        base_score, base_errored = base_scores[key]
        if key in lower:  # lower is better: compare the negated scores
            score = None if score is None else -score
            base_score = None if base_score is None else -base_score
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
