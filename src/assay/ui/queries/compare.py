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

from assay._metric import Direction, MetricInfo
from assay.comparison import comparability
from assay.comparison._compare import compare_experiments
from assay.store.read import changes as stored
from assay.store.read.changes import EPSILON
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.metrics import metric_info
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
from assay.ui.queries._sql import offset, preview
from assay.ui.queries.rows import reference_previews, score_cells

__all__ = ["EPSILON", "MAX_EXPERIMENTS", "cell_changes", "check_comparable", "compare_page"]


MAX_EXPERIMENTS = 8


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
    keys = stored.metric_keys(db, ids)
    if metric is not None and metric not in keys:
        known = ", ".join(keys)
        raise BadRequest(f"unknown metric {metric!r}; these experiments' metrics: {known}")
    directions = _directions(db, ids, keys)
    lower = [key for key in keys if directions[key] == "lower"]
    total, changed = stored.changed_rows(
        db, ids, show=show, metric=metric, limit=per_page, offset=offset(page, per_page), lower=lower
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
        rows=_rows(db, experiments, changed, metric, set(lower)),
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
            info = metric_info(db, experiment_id, key)
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


def _metrics(
    db: ReadOnlyDatabase,
    ids: list[str],
    keys: list[str],
    lower: list[str],
    known: dict[tuple[str, str], tuple[int, int]],
) -> list[CompareMetric]:
    """Means, errors and per-row change counts; ``known`` holds the counts the paired
    comparison already made in its own pass."""
    means: dict[str, dict[str, float | None]] = defaultdict(dict)
    errors: dict[str, dict[str, int]] = defaultdict(dict)
    for figure in stored.metric_figures(db, ids):
        means[figure.key][figure.experiment_id] = figure.mean
        errors[figure.key][figure.experiment_id] = int(figure.errors)
    worse: dict[str, dict[str, int]] = defaultdict(dict)
    better: dict[str, dict[str, int]] = defaultdict(dict)
    for key in keys:
        sign = -1.0 if key in lower else 1.0
        for other in ids[1:]:
            if (key, other) in known:
                worse[key][other], better[key][other] = known[(key, other)]
                continue
            worse[key][other], better[key][other] = stored.pair_counts(db, ids[0], other, key, sign=sign)
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
    changed: list[stored.ChangedRow],
    metric: str | None,
    lower: set[str],
) -> list[CompareRow]:
    example_ids = sorted({row.example_id for row in changed})
    runs = stored.runs_of(db, [e.id for e in experiments], example_ids)
    scores = score_cells(db, [run.id for run in runs.values()])
    references = reference_previews(db, experiments[0], example_ids)
    rows = []
    for change in changed:
        row_key = (change.example_id, change.repetition)
        cells = [_cell(e.id, runs.get((e.id, *row_key)), scores) for e in experiments]
        for cell in cells[1:]:
            cell.changes = cell_changes(cells[0], cell, metric, lower)
        rows.append(
            CompareRow(
                example_id=change.example_id,
                repetition=change.repetition,
                position=change.position,
                inputs=preview(change.inputs),
                reference=references.get(change.example_id, ""),
                change=_overall(bool(change.worse), bool(change.better)),
                cells=cells,
            )
        )
    return rows


def _cell(experiment_id: str, run: stored.CellRun | None, scores: dict[str, list[ScoreCell]]) -> CompareCell:
    if run is None:
        return CompareCell(experiment_id=experiment_id, scores=[])
    return CompareCell(
        experiment_id=experiment_id,
        run_id=run.id,
        outputs=preview(run.outputs),
        error=run.error,
        scores=scores.get(run.id, []),
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
