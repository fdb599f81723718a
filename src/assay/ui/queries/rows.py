"""An experiment's rows: the filtered, sorted, paginated table and one row in full.

Filtering, sorting and paging all happen in SQL: a page reads ``per_page`` runs, their
results and their examples, whatever the experiment's size. A sorted page is an index
walk (``walk``) where one holds the sort: a metric's ``results_by_rank``, the runs'
``runs_by_latency`` and ``runs_by_error``; a filter rides along it unless it keeps few
rows, whose matches are then sorted. Counts of filtered rows are kept (``kept``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from assay._metric import MetricInfo
from assay.store.read import ranked
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.kept import kept_count, signature
from assay.store.read.pairing import METRIC_INFO_SQL, decode_metric_info
from assay.store.read.walk import Cursor, Ranking, count_ranked, encode_cursor, page_entries
from assay.ui.errors import BadRequest, NotFound
from assay.ui.models import (
    ExperimentSummary,
    FeedbackView,
    ResultView,
    RowDetail,
    RowFilter,
    RowPage,
    RowSummary,
    ScoreCell,
)
from assay.ui.queries._sql import (
    PREVIEW_SOURCE_CHARS,
    in_list,
    loads,
    offset,
    preview,
    version_clause,
)
from assay.ui.queries.experiments import metric_keys
from assay.ui.queries.failing import FAILED, FLAGGED, Failing, count_failing, failing
from assay.ui.queries.search import search_clause
from assay.ui.queries.trace import run_tree

__all__ = [
    "reference_previews",
    "results_of",
    "row_detail",
    "row_page",
    "score_cells",
]


_ALL_ROWS = "u.experiment_id = ?"

_FIXED_SORTS = {
    "position": "u.position",
    "latency": "u.latency_ms",
    "error": "(u.error IS NOT NULL)",
}

# A filtered walk visits about per_page * rows / matches index entries per page: below
# one match in this many rows, sorting the matches costs less.
_WALK_SELECTIVITY = 50

# The ranked expressions of the runs' indexes, as the indexes write them.
_RUN_RANKS = {
    "latency": "u.latency_ms",
    "error": "CASE WHEN u.error IS NULL THEN 0 ELSE 1 END",
}


def row_page(
    db: ReadOnlyDatabase,
    experiment: ExperimentSummary,
    row_filter: RowFilter,
    *,
    page: int,
    per_page: int,
    after: Cursor | None = None,
) -> RowPage:
    """One page of rows; ``after`` (the previous page's last row, as its "next" link
    carries it) starts an index-walked page there instead of walking to its offset."""
    keys = metric_keys(db, experiment.id)
    lower = _lower_keys(db, experiment.id, row_filter, keys)
    spec = failing(db, experiment.id, row_filter, lower) if row_filter.failed else None
    where, params = _where(db, experiment.id, row_filter, lower, spec)
    by_index = _index_walk(db, experiment.id, row_filter)
    query = _Query(db, experiment, row_filter, keys, lower, spec, by_index, where, params)
    ranking = _ranking(db, experiment.id, row_filter, lower, by_index, spec) or _run_ranking(
        row_filter, where, params
    )
    total = query.total() if ranking is not None and ranking.filtered else None
    if ranking is not None and total is not None and total * _WALK_SELECTIVITY < experiment.rows:
        ranking = None  # a rare match: sorting the matches beats walking past the others
    last: Cursor | None = None
    if ranking is not None:
        entries = page_entries(
            db,
            ranking,
            descending=row_filter.order == "desc",
            limit=per_page,
            offset=offset(page, per_page),
            after=after,
            counts=None if ranking.filtered else query.counts(ranking),
        )
        runs = _runs_of(db, [entry.run_id for entry in entries])
        last = entries[-1].cursor if len(entries) == per_page else None
    else:
        order, order_params = _order(row_filter, keys)
        runs = db.query(
            f"SELECT {_RUN_COLUMNS} FROM runs u WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, *order_params, per_page, offset(page, per_page)],
        )
    if total is None:  # a short page that is not past the end says how many there are
        short = len(runs) < per_page and (runs or page == 1)
        total = offset(page, per_page) + len(runs) if short else query.total()
    next_after = encode_cursor(last) if last is not None and page * per_page < total else None
    scores = score_cells(db, [run["id"] for run in runs])
    references = reference_previews(db, experiment, [run["example_id"] for run in runs])
    rows = [
        RowSummary(
            run_id=run["id"],
            example_id=run["example_id"],
            repetition=run["repetition"],
            position=run["position"],
            inputs=preview(run["inputs"]),
            outputs=preview(run["outputs"]),
            reference=references.get(run["example_id"], ""),
            error=run["error"],
            latency_ms=run["latency_ms"],
            scores=scores.get(run["id"], []),
        )
        for run in runs
    ]
    return RowPage(
        experiment=experiment,
        filter=row_filter,
        metric_keys=keys,
        total=int(total),
        page=page,
        per_page=per_page,
        rows=rows,
        next_after=next_after,
    )


@dataclass(frozen=True)
class _Query:
    """What a page's count needs, so that it is counted only when the page cannot tell."""

    db: ReadOnlyDatabase
    experiment: ExperimentSummary
    row_filter: RowFilter
    keys: list[str]
    lower: set[str]
    spec: Failing | None
    by_index: str | None
    where: str
    params: list[Any]

    def total(self) -> int:
        db, experiment_id, row_filter = self.db, self.experiment.id, self.row_filter
        if self.where == _ALL_ROWS:  # no filter: the experiment's (stored) count will do
            return self.experiment.rows
        if self.by_index is not None and row_filter.metric is not None:  # a bounded metric alone
            return ranked.count(db, experiment_id, row_filter.metric, _bounds(row_filter, self.lower))
        spec, where, params = self.spec, self.where, self.params
        if spec is not None and not row_filter.q and not _has_bounds(row_filter):  # failing rows alone
            return kept_count(
                db,
                experiment_id,
                ("failing", where, *params),
                lambda: count_failing(db, experiment_id, self.keys, spec),
            )
        return kept_count(db, experiment_id, (where, *params), lambda: _count(db, where, params))

    def counts(self, ranking: Ranking) -> Callable[[], tuple[int, int]] | None:
        """The entries of an unfiltered walk and how many rank, for a finished experiment
        (whose stored row count is final), each counted once while it stays so."""
        if signature(self.db, self.experiment.id) is None:
            return None

        def counted() -> tuple[int, int]:
            what = ("ranked", ranking.scope, ranking.rank, *ranking.params, *ranking.bounds)
            ranked_rows = kept_count(
                self.db, self.experiment.id, what, lambda: count_ranked(self.db, ranking)
            )
            return (ranked_rows if ranking.bounds else self.total()), ranked_rows

        return counted


def _ranking(
    db: ReadOnlyDatabase,
    experiment_id: str,
    row_filter: RowFilter,
    lower: set[str],
    by_index: str | None,
    spec: Failing | None,
) -> Ranking | None:
    """The metric index whose walk answers a metric-sorted page, if one does: its own
    bounds a range of it, any other filter checked on each entry's run, so that a page
    stops after its rows instead of sorting every row that matches."""
    if not row_filter.sort.startswith("metric:"):
        return None
    key = row_filter.sort.removeprefix("metric:")
    own = row_filter.metric == key
    if by_index is None and not ranked.one_result_per_row(db, experiment_id, key):
        return None
    walk = ranked.ranking(experiment_id, key, _bounds(row_filter, lower) if own else [])
    rest, params = _where(db, experiment_id, row_filter, lower, spec, bounds=not own)
    if rest == _ALL_ROWS:
        return walk
    return replace(
        walk,
        scope=f"{walk.scope} AND EXISTS (SELECT 1 FROM runs u WHERE u.id = r.run_id AND {rest})",
        params=(*walk.params, *params),
        filtered=True,
    )


def _run_ranking(row_filter: RowFilter, where: str, params: list[Any]) -> Ranking | None:
    """The runs' latency or errored index, filtered as the page is (a filter rides along
    the walk: rows come in index order, the filtered ones skipped)."""
    rank = _RUN_RANKS.get(row_filter.sort)
    if rank is None:
        return None
    return Ranking(
        table="runs",
        alias="u",
        scope=where,
        params=tuple(params),
        rank=rank,
        run_id="u.id",
        filtered=where != _ALL_ROWS,
    )


def _count(db: ReadOnlyDatabase, where: str, params: list[Any]) -> int:
    return int(db.query(f"SELECT COUNT(*) FROM runs u WHERE {where}", params)[0][0])


def _runs_of(db: ReadOnlyDatabase, ids: list[str]) -> list[Any]:
    """The runs of ``ids``, in that order."""
    if not ids:
        return []
    marks, id_params = in_list(ids)
    found = {
        run["id"]: run
        for run in db.query(f"SELECT {_RUN_COLUMNS} FROM runs u WHERE u.id IN {marks}", id_params)
    }
    return [found[run_id] for run_id in ids]


_RUN_COLUMNS = (
    "u.id, u.example_id, u.repetition, u.position, u.error, u.latency_ms, "
    f"substr(u.inputs, 1, {PREVIEW_SOURCE_CHARS}) AS inputs, "
    f"substr(u.outputs, 1, {PREVIEW_SOURCE_CHARS}) AS outputs"
)


def _index_walk(db: ReadOnlyDatabase, experiment_id: str, row_filter: RowFilter) -> str | None:
    """The metric whose index alone answers the page (its sort, its bounds), if any: no
    filter on anything else, and one result of it on every row."""
    sort = row_filter.sort.removeprefix("metric:") if row_filter.sort.startswith("metric:") else None
    metric = row_filter.metric if _has_bounds(row_filter) else None
    if row_filter.failed or row_filter.q or (sort and metric and sort != metric):
        return None
    key = sort or metric
    if key is None or not ranked.one_result_per_row(db, experiment_id, key):
        return None
    return key


def _has_bounds(row_filter: RowFilter) -> bool:
    return row_filter.below is not None or (row_filter.worse_than is not None and not row_filter.failed)


def _bounds(row_filter: RowFilter, lower: set[str]) -> list[ranked.Bound]:
    """The chosen metric's range: below a value, and (without "failed", where it is a
    failing threshold instead) worse than one, read with the metric's direction."""
    bounds = []
    if row_filter.metric is not None and row_filter.worse_than is not None and not row_filter.failed:
        bounds.append(ranked.Bound(">" if row_filter.metric in lower else "<", row_filter.worse_than))
    if row_filter.below is not None:
        bounds.append(ranked.Bound("<", row_filter.below))
    return bounds


def _lower_keys(db: ReadOnlyDatabase, experiment_id: str, row_filter: RowFilter, keys: list[str]) -> set[str]:
    """The lower-is-better metrics, once the filter's metric names are checked."""
    for name in ("below", "worse_than"):
        if getattr(row_filter, name) is not None and row_filter.metric is None:
            raise BadRequest(f"the {name!r} filter needs a 'metric' to compare")
    if row_filter.metric is not None:
        _check_metric(row_filter.metric, keys)
    for key in row_filter.thresholds:
        _check_metric(key, keys)
    return {key for key in keys if _direction(db, experiment_id, key) == "lower"}


def _where(
    db: ReadOnlyDatabase,
    experiment_id: str,
    row_filter: RowFilter,
    lower: set[str],
    spec: Failing | None,
    *,
    bounds: bool = True,
) -> tuple[str, list[Any]]:
    clauses: list[str] = [_ALL_ROWS]
    params: list[Any] = [experiment_id]
    if row_filter.failed:
        condition, failing_params = spec.condition() if spec is not None else ("", [])
        if spec is not None and spec.flagged:
            clauses.append(FLAGGED)
        clauses.append(FAILED.format(failing=condition))
        params += failing_params
    for bound in _bounds(row_filter, lower) if bounds else []:
        clauses.append(
            "EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id AND r.key = ? "
            f"AND r.error IS NULL AND r.score {bound.op} ?)"
        )
        params += [row_filter.metric, bound.value]
    if row_filter.q:
        search = search_clause(db, experiment_id, row_filter.q)
        if search.drives:  # keep SQLite off the experiment's index: the candidates lead
            clauses[0] = "+" + _ALL_ROWS
        clauses.append(search.condition)
        params += search.params
    return " AND ".join(clauses), params


def _direction(db: ReadOnlyDatabase, experiment_id: str, key: str) -> str:
    return MetricInfo.of(decode_metric_info(db.query_one(METRIC_INFO_SQL, (experiment_id, key)))).direction


def _order(row_filter: RowFilter, keys: list[str]) -> tuple[str, list[Any]]:
    direction = "DESC" if row_filter.order == "desc" else "ASC"
    tie = "u.position, u.repetition"
    if row_filter.sort in _FIXED_SORTS:
        column = _FIXED_SORTS[row_filter.sort]
        # Rows without a latency last in both directions, as the index walk reads them.
        last = f"{column} IS NULL, " if row_filter.sort == "latency" else ""
        return f"{last}{column} {direction}, {tie}", []
    if row_filter.sort.startswith("metric:"):
        key = row_filter.sort.removeprefix("metric:")
        _check_metric(key, keys)
        # Errored and missing results sort as NULL: last in both directions, as in the index.
        score = (
            "(SELECT MIN(CASE WHEN r.error IS NULL THEN r.score END) FROM results r "
            "WHERE r.run_id = u.id AND r.key = ?)"
        )
        return f"{score} IS NULL, {score} {direction}, {tie}", [key, key]
    accepted = ", ".join([*_FIXED_SORTS, "metric:<key>"])
    raise BadRequest(f"unknown sort {row_filter.sort!r}; accepted: {accepted}")


def _check_metric(key: str, keys: list[str]) -> None:
    if key not in keys:
        known = ", ".join(keys) or "none"
        raise BadRequest(f"unknown metric {key!r}; this experiment's metrics: {known}")


def score_cells(db: ReadOnlyDatabase, run_ids: list[str]) -> dict[str, list[ScoreCell]]:
    """Each run's results, as compact cells, in the order they were written."""
    if not run_ids:  # a page past the end (PostgreSQL refuses an empty IN list)
        return {}
    ids, params = in_list(run_ids)
    cells: dict[str, list[ScoreCell]] = defaultdict(list)
    for row in db.query(
        f"SELECT run_id, key, score, substr(value, 1, {PREVIEW_SOURCE_CHARS}) AS value, error "
        f"FROM results WHERE run_id IN {ids} ORDER BY pk",
        params,
    ):
        cells[row["run_id"]].append(
            ScoreCell(
                key=row["key"],
                score=None if row["error"] else row["score"],
                value=preview(row["value"]) or None,
                error=row["error"],
            )
        )
    return cells


def reference_previews(
    db: ReadOnlyDatabase, experiment: ExperimentSummary, example_ids: list[str]
) -> dict[str, str]:
    """Reference outputs of the examples, as of the dataset version the experiment ran on."""
    if experiment.dataset_id is None or not example_ids:
        return {}
    alive, alive_params = version_clause("e", experiment.dataset_version)
    ids, params = in_list(sorted(set(example_ids)))
    rows = db.query(
        f"SELECT e.id, substr(e.outputs, 1, {PREVIEW_SOURCE_CHARS}) AS outputs FROM examples e "
        f"WHERE e.dataset_id = ? AND e.id IN {ids} AND {alive}",
        [experiment.dataset_id, *params, *alive_params],
    )
    return {row["id"]: preview(row["outputs"]) for row in rows}


def row_detail(db: ReadOnlyDatabase, experiment: ExperimentSummary, run_id: str) -> RowDetail:
    run = db.query_one("SELECT * FROM runs WHERE id = ? AND experiment_id = ?", (run_id, experiment.id))
    if run is None:
        raise NotFound(f"experiment {experiment.name!r} has no row with run id {run_id!r}")
    example = _example(db, experiment, run["example_id"])
    previous_id, next_id = _neighbours(db, experiment.id, run["position"], run["repetition"])
    return RowDetail(
        experiment=experiment,
        run_id=run["id"],
        example_id=run["example_id"],
        repetition=run["repetition"],
        position=run["position"],
        inputs=loads(run["inputs"]),
        outputs=loads(run["outputs"]),
        reference_outputs=example.get("outputs"),
        example_metadata=example.get("metadata"),
        error=run["error"],
        run=run_tree(run),
        results=results_of(db, run_id),
        feedback=feedback_of(db, run_id),
        previous_run_id=previous_id,
        next_run_id=next_id,
    )


def results_of(db: ReadOnlyDatabase, run_id: str) -> list[ResultView]:
    return [
        ResultView(
            key=row["key"],
            score=None if row["error"] else row["score"],
            value=loads(row["value"]),
            feedback=row["feedback"],
            comment=row["comment"],
            correction=loads(row["correction"]),
            metadata=loads(row["metadata"]),
            evaluator_info=loads(row["evaluator_info"]),
            error=row["error"],
        )
        for row in db.query("SELECT * FROM results WHERE run_id = ? ORDER BY pk", (run_id,))
    ]


def feedback_of(db: ReadOnlyDatabase, run_id: str) -> list[FeedbackView]:
    """Feedback on the run (none in a store made before feedback existed)."""
    if db.query_one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'feedback'") is None:
        return []
    return [
        FeedbackView(
            key=row["key"],
            score=row["score"],
            value=loads(row["value"]),
            comment=row["comment"],
            correction=loads(row["correction"]),
            source=loads(row["feedback_source"]),
            created_at=row["created_at"],
        )
        for row in db.query("SELECT * FROM feedback WHERE run_id = ? ORDER BY created_at", (run_id,))
    ]


def _example(db: ReadOnlyDatabase, experiment: ExperimentSummary, example_id: str) -> dict[str, Any]:
    if experiment.dataset_id is None:
        return {}
    alive, alive_params = version_clause("e", experiment.dataset_version)
    row = db.query_one(
        f"SELECT outputs, metadata FROM examples e WHERE e.dataset_id = ? AND e.id = ? AND {alive}",
        (experiment.dataset_id, example_id, *alive_params),
    )
    return {"outputs": loads(row["outputs"]), "metadata": loads(row["metadata"])} if row else {}


def _neighbours(
    db: ReadOnlyDatabase, experiment_id: str, position: int, repetition: int
) -> tuple[str | None, str | None]:
    before = db.query_one(
        "SELECT id FROM runs WHERE experiment_id = ? AND (position, repetition) < (?, ?) "
        "ORDER BY position DESC, repetition DESC LIMIT 1",
        (experiment_id, position, repetition),
    )
    after = db.query_one(
        "SELECT id FROM runs WHERE experiment_id = ? AND (position, repetition) > (?, ?) "
        "ORDER BY position, repetition LIMIT 1",
        (experiment_id, position, repetition),
    )
    return (before["id"] if before else None, after["id"] if after else None)
