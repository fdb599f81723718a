"""An experiment's rows: a filtered, sorted page of them, and what a page shows of each.

Filtering, sorting and paging all happen in SQL: a page reads ``limit`` runs, their
results and their examples, whatever the experiment's size. A sorted page is an index
walk (``walk``) where one holds the sort: a metric's ``results_by_rank``, the runs'
``runs_by_latency`` and ``runs_by_error``; a filter rides along it unless it keeps few
rows, whose matches are then sorted. A page past row 5,000 starts where the stored
metric columns or row orders place it (``seek``), not walked to. Counts of filtered rows
are kept (``kept``).

The caller checks the query first (``RowQuery``'s metrics are the experiment's, its sort
one of ``SORTS`` or ``metric:<key>``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from assay.store.read import orders, ranked, seek, stored_counts
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.failing import FAILED, FLAGGED, Failing, count_failing, failing
from assay.store.read.kept import kept_count, signature
from assay.store.read.search import search_clause
from assay.store.read.sql import PREVIEW_SOURCE_CHARS, in_list, records, version_clause
from assay.store.read.walk import Cursor, Ranking, count_ranked, page_entries

__all__ = [
    "SORTS",
    "ResultPreview",
    "RowQuery",
    "RowsPage",
    "RunPreview",
    "reference_outputs",
    "result_previews",
    "row_page",
    "runs_of",
]


@dataclass(frozen=True)
class RowQuery:
    """Which rows, in which order: see ``assay.ui.models.RowFilter`` for each field."""

    failed: bool = False
    metric: str | None = None
    below: float | None = None
    worse_than: float | None = None
    thresholds: Mapping[str, float | None] = field(default_factory=dict)
    q: str | None = None
    sort: str = "position"
    order: str = "asc"


@dataclass(frozen=True, slots=True)
class RunPreview:
    """A row as a table shows it: its inputs and outputs cut at ``PREVIEW_SOURCE_CHARS``."""

    id: str
    example_id: str
    repetition: int
    position: int
    error: str | None
    latency_ms: float | None
    inputs: str | None
    outputs: str | None


@dataclass(frozen=True, slots=True)
class ResultPreview:
    """A result as a table shows it: its value cut at ``PREVIEW_SOURCE_CHARS``."""

    run_id: str
    key: str
    score: float | None
    value: str | None
    error: str | None


@dataclass(frozen=True)
class RowsPage:
    total: int  # rows that match
    runs: list[RunPreview]
    next_after: Cursor | None  # where the next page starts, for an index-walked page


_ALL_ROWS = "u.experiment_id = ?"

SORTS = {
    "position": "u.position",
    "latency": "u.latency_ms",
    "error": "(u.error IS NOT NULL)",
}
"""The fixed sorts of a page (and ``metric:<key>``, a metric's score)."""

# A filtered walk visits about limit * rows / matches index entries per page: below
# one match in this many rows, sorting the matches costs less.
_WALK_SELECTIVITY = 50

# The ranked expressions of the runs' indexes, as the indexes write them.
_RUN_RANKS = {
    "latency": "u.latency_ms",
    "error": "CASE WHEN u.error IS NULL THEN 0 ELSE 1 END",
}

_RUN_COLUMNS = (
    "u.id AS id, u.example_id AS example_id, u.repetition AS repetition, u.position AS position, "
    "u.error AS error, u.latency_ms AS latency_ms, "
    f"substr(u.inputs, 1, {PREVIEW_SOURCE_CHARS}) AS inputs, "
    f"substr(u.outputs, 1, {PREVIEW_SOURCE_CHARS}) AS outputs"
)


@dataclass(frozen=True)
class _Experiment:
    id: str
    rows: int  # its stored (or counted) row count
    keys: list[str]  # its metrics
    lower: set[str]  # those where lower is better


def row_page(
    db: ReadOnlyDatabase,
    experiment_id: str,
    rows: int,
    query: RowQuery,
    *,
    keys: list[str],
    lower: set[str],
    limit: int,
    offset: int,
    after: Cursor | None = None,
) -> RowsPage:
    """One page of the experiment's ``rows`` rows (``keys``: its metrics, ``lower``: those
    where lower is better); ``after`` (the previous page's last row) starts an
    index-walked page there instead of walking to its offset."""
    experiment = _Experiment(experiment_id, rows, keys, lower)
    spec = _failing(db, experiment, query) if query.failed else None
    where, params = _where(db, experiment, query, spec)
    by_index = _index_walk(db, experiment_id, query)
    counting = _Counting(db, experiment, query, spec, by_index, where, params, deep=offset > seek.DEEP)
    ranking = _ranking(db, experiment, query, by_index, spec) or _run_ranking(query, where, params)
    total = counting.total() if ranking is not None and ranking.filtered else None
    if ranking is not None and total is not None and total * _WALK_SELECTIVITY < rows:
        ranking = None  # a rare match: sorting the matches beats walking past the others
    last: Cursor | None = None
    start = None  # where a deep page of data order starts, when the stored orders tell
    if after is None and offset > seek.DEEP and not query.q:
        if ranking is not None:
            after = _sought(db, experiment, query, spec, ranking, offset)
        elif query.sort == "position":
            start = seek.order_cursor(
                db,
                experiment_id,
                "position",
                _kept(experiment, query, spec),
                descending=query.order == "desc",
                offset=offset,
            )
    if ranking is not None:
        entries = page_entries(
            db,
            ranking,
            descending=query.order == "desc",
            limit=limit,
            offset=offset,
            after=after,
            counts=None if ranking.filtered else counting.counts(ranking),
        )
        runs = runs_of(db, [entry.run_id for entry in entries])
        last = entries[-1].cursor if len(entries) == limit else None
    else:
        order, order_params = _order(query)
        skip, sql_where, where_params = offset, where, list(params)
        if start is not None:  # the page after the row before it
            skip = 0
            if query.order == "desc":
                # a range of the position index (an OR of two would be checked on each entry)
                sql_where += " AND u.position <= ? AND (u.position < ? OR u.repetition > ?)"
                where_params += [start.position, start.position, start.repetition]
            else:
                sql_where += " AND (u.position, u.repetition) > (?, ?)"
                where_params += [start.position, start.repetition]
        runs = records(
            RunPreview,
            db.query(
                f"SELECT {_RUN_COLUMNS} FROM runs u WHERE {sql_where} ORDER BY {order} LIMIT ? OFFSET ?",
                [*where_params, *order_params, limit, skip],
            ),
        )
    if total is None:  # a short page that is not past the end says how many there are
        short = len(runs) < limit and (runs or offset == 0)
        total = offset + len(runs) if short else counting.total()
    next_after = last if last is not None and offset + limit < total else None
    return RowsPage(int(total), runs, next_after)


def _sought(
    db: ReadOnlyDatabase,
    experiment: _Experiment,
    query: RowQuery,
    spec: Failing | None,
    ranking: Ranking,
    offset: int,
) -> Cursor | None:
    """Where a deep page of an index-walked sort starts: from the stored row orders, or
    (an unfiltered metric sort, or its own bound) a metric's stored columns where they
    answer; None: walked to it. A filtered metric sort tries the orders first: the columns
    place its row by rank, then walk the rank's ties checking the filter on each."""
    descending = query.order == "desc"
    kept = _kept(experiment, query, spec)
    if spec is not None:
        found = seek.order_cursor(db, experiment.id, query.sort, kept, descending=descending, offset=offset)
        if found is not None:
            return found
    if query.sort.startswith("metric:"):
        failing_rows = (
            seek.FailingRows(experiment.keys, spec.tests)
            if spec is not None and not _has_bounds(query)
            else None
        )
        found = seek.cursor_before(
            db,
            experiment.id,
            query.sort.removeprefix("metric:"),
            ranking,
            descending=descending,
            offset=offset,
            failing=failing_rows,
        )
        if found is not None:
            return found
    if spec is not None:
        return None  # the orders are not stored
    return seek.order_cursor(db, experiment.id, query.sort, kept, descending=descending, offset=offset)


def _kept(experiment: _Experiment, query: RowQuery, spec: Failing | None) -> seek.Kept:
    """The page's filter as the stored orders tell it (the caller leaves searches out)."""
    bounds = tuple(_bounds(query, experiment.lower)) if _has_bounds(query) else ()
    return seek.Kept(
        tests=spec.tests if spec is not None else None,
        metric=query.metric if bounds else None,
        bounds=bounds,
    )


def _failing(db: ReadOnlyDatabase, experiment: _Experiment, query: RowQuery) -> Failing:
    return failing(
        db,
        experiment.id,
        metric=query.metric,
        worse_than=query.worse_than,
        thresholds=query.thresholds,
        lower=experiment.lower,
    )


@dataclass(frozen=True)
class _Counting:
    """What a page's count needs, so that it is counted only when the page cannot tell."""

    db: ReadOnlyDatabase
    experiment: _Experiment
    query: RowQuery
    spec: Failing | None
    by_index: str | None
    where: str
    params: list[Any]
    deep: bool = False  # a deep page, whose seek reads the stored row orders anyway

    def total(self) -> int:
        db, experiment_id, query = self.db, self.experiment.id, self.query
        if self.where == _ALL_ROWS:  # no filter: the experiment's (stored) count will do
            return self.experiment.rows
        if self._bound_alone():  # a bounded metric alone, whatever the sort
            assert query.metric is not None
            return ranked.count(db, experiment_id, query.metric, _bounds(query, self.experiment.lower))
        spec, where, params = self.spec, self.where, self.params
        if spec is not None and not query.q and not _has_bounds(query):  # failing rows alone
            return kept_count(
                db, experiment_id, ("failing", where, *params), lambda: self._failing_count(spec)
            )
        return kept_count(db, experiment_id, (where, *params), lambda: _count(db, where, params))

    def _bound_alone(self) -> bool:
        """Whether the filter is a metric's bound alone, on a metric holding one result per
        row (its index entries are the rows: counted from its stored columns or index)."""
        query = self.query
        if query.metric is None or query.failed or query.q or not _has_bounds(query):
            return False
        return self.by_index is not None or ranked.one_result_per_row(
            self.db, self.experiment.id, query.metric
        )

    def _failing_count(self, spec: Failing) -> int:
        """From the stored row orders for a deep page (its seek reads them), else the
        stored metric columns where they answer it (fewer bytes), else the index ranges."""
        db, experiment_id, keys = self.db, self.experiment.id, self.experiment.keys
        if self.deep:
            found = orders.failing_keys(db, experiment_id, spec.tests)
            if found is not None:
                return len(found[0])
        stored = stored_counts.count_failing(db, experiment_id, keys, spec.tests)
        return stored if stored is not None else count_failing(db, experiment_id, keys, spec)

    def counts(self, ranking: Ranking) -> Callable[[], tuple[int, int]] | None:
        """The entries of an unfiltered walk and how many rank, for a finished experiment
        (whose stored row count is final), each counted once while it stays so."""
        if signature(self.db, self.experiment.id) is None:
            return None

        def counted() -> tuple[int, int]:
            what = ("ranked", ranking.scope, ranking.rank, *ranking.params, *ranking.bounds)
            ranked_rows = kept_count(self.db, self.experiment.id, what, lambda: self._ranked(ranking))
            return (ranked_rows if ranking.bounds else self.total()), ranked_rows

        return counted

    def _ranked(self, ranking: Ranking) -> int:
        """The entries with a rank: a metric's from its stored columns where they answer
        it (a walk of a million index entries otherwise), else counted."""
        sort = self.query.sort
        if ranking.table == "results" and sort.startswith("metric:") and not ranking.bounds:
            stored = stored_counts.count_ranked(self.db, self.experiment.id, sort.removeprefix("metric:"))
            if stored is not None:
                return stored
        return count_ranked(self.db, ranking)


def _ranking(
    db: ReadOnlyDatabase,
    experiment: _Experiment,
    query: RowQuery,
    by_index: str | None,
    spec: Failing | None,
) -> Ranking | None:
    """The metric index whose walk answers a metric-sorted page, if one does: its own
    bounds a range of it, any other filter checked on each entry's run, so that a page
    stops after its rows instead of sorting every row that matches."""
    if not query.sort.startswith("metric:"):
        return None
    key = query.sort.removeprefix("metric:")
    own = query.metric == key
    if by_index is None and not ranked.one_result_per_row(db, experiment.id, key):
        return None
    walk = ranked.ranking(experiment.id, key, _bounds(query, experiment.lower) if own else [])
    rest, params = _where(db, experiment, query, spec, bounds=not own)
    if rest == _ALL_ROWS:
        return walk
    return replace(
        walk,
        scope=f"{walk.scope} AND EXISTS (SELECT 1 FROM runs u WHERE u.id = r.run_id AND {rest})",
        params=(*walk.params, *params),
        filtered=True,
    )


def _run_ranking(query: RowQuery, where: str, params: list[Any]) -> Ranking | None:
    """The runs' latency or errored index, filtered as the page is (a filter rides along
    the walk: rows come in index order, the filtered ones skipped)."""
    rank = _RUN_RANKS.get(query.sort)
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


def runs_of(db: ReadOnlyDatabase, ids: list[str]) -> list[RunPreview]:
    """The runs of ``ids``, in that order."""
    if not ids:
        return []
    marks, id_params = in_list(ids)
    found = {
        run.id: run
        for run in records(
            RunPreview, db.query(f"SELECT {_RUN_COLUMNS} FROM runs u WHERE u.id IN {marks}", id_params)
        )
    }
    return [found[run_id] for run_id in ids]


def _index_walk(db: ReadOnlyDatabase, experiment_id: str, query: RowQuery) -> str | None:
    """The metric whose index alone answers the page (its sort, its bounds), if any: no
    filter on anything else, and one result of it on every row."""
    sort = query.sort.removeprefix("metric:") if query.sort.startswith("metric:") else None
    metric = query.metric if _has_bounds(query) else None
    if query.failed or query.q or (sort and metric and sort != metric):
        return None
    key = sort or metric
    if key is None or not ranked.one_result_per_row(db, experiment_id, key):
        return None
    return key


def _has_bounds(query: RowQuery) -> bool:
    return query.below is not None or (query.worse_than is not None and not query.failed)


def _bounds(query: RowQuery, lower: set[str]) -> list[ranked.Bound]:
    """The chosen metric's range: below a value, and (without "failed", where it is a
    failing threshold instead) worse than one, read with the metric's direction."""
    bounds = []
    if query.metric is not None and query.worse_than is not None and not query.failed:
        bounds.append(ranked.Bound(">" if query.metric in lower else "<", query.worse_than))
    if query.below is not None:
        bounds.append(ranked.Bound("<", query.below))
    return bounds


def _where(
    db: ReadOnlyDatabase,
    experiment: _Experiment,
    query: RowQuery,
    spec: Failing | None,
    *,
    bounds: bool = True,
) -> tuple[str, list[Any]]:
    clauses: list[str] = [_ALL_ROWS]
    params: list[Any] = [experiment.id]
    if query.failed:
        condition, failing_params = spec.condition() if spec is not None else ("", [])
        if spec is not None and spec.flagged:
            clauses.append(FLAGGED)
        clauses.append(FAILED.format(failing=condition))
        params += failing_params
    for bound in _bounds(query, experiment.lower) if bounds else []:
        clauses.append(
            "EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id AND r.key = ? "
            f"AND r.error IS NULL AND r.score {bound.op} ?)"
        )
        params += [query.metric, bound.value]
    if query.q:
        search = search_clause(db, experiment.id, query.q)
        if search.drives:  # keep SQLite off the experiment's index: the candidates lead
            clauses[0] = "+" + _ALL_ROWS
        clauses.append(search.condition)
        params += search.params
    return " AND ".join(clauses), params


def _order(query: RowQuery) -> tuple[str, list[Any]]:
    direction = "DESC" if query.order == "desc" else "ASC"
    tie = "u.position, u.repetition"
    if query.sort in SORTS:
        column = SORTS[query.sort]
        # Rows without a latency last in both directions, as the index walk reads them.
        last = f"{column} IS NULL, " if query.sort == "latency" else ""
        return f"{last}{column} {direction}, {tie}", []
    key = query.sort.removeprefix("metric:")
    # Errored and missing results sort as NULL: last in both directions, as in the index.
    score = "(SELECT MIN(CASE WHEN r.error IS NULL THEN r.score END) FROM results r WHERE r.run_id = u.id AND r.key = ?)"
    return f"{score} IS NULL, {score} {direction}, {tie}", [key, key]


def result_previews(db: ReadOnlyDatabase, run_ids: list[str]) -> list[ResultPreview]:
    """The runs' results, in the order they were written."""
    if not run_ids:  # a page past the end (PostgreSQL refuses an empty IN list)
        return []
    ids, params = in_list(run_ids)
    rows = db.query(
        f"SELECT run_id, key, score, substr(value, 1, {PREVIEW_SOURCE_CHARS}) AS value, error "
        f"FROM results WHERE run_id IN {ids} ORDER BY pk",
        params,
    )
    return records(ResultPreview, rows)


def reference_outputs(
    db: ReadOnlyDatabase, dataset_id: str, version: int | None, example_ids: list[str]
) -> dict[str, str | None]:
    """Reference outputs of the examples (cut at ``PREVIEW_SOURCE_CHARS``), as of the
    dataset version ``version`` (None: the current one)."""
    if not example_ids:
        return {}
    alive, alive_params = version_clause("e", version)
    ids, params = in_list(sorted(set(example_ids)))
    rows = db.query(
        f"SELECT e.id, substr(e.outputs, 1, {PREVIEW_SOURCE_CHARS}) AS outputs FROM examples e "
        f"WHERE e.dataset_id = ? AND e.id IN {ids} AND {alive}",
        [dataset_id, *params, *alive_params],
    )
    return {row["id"]: row["outputs"] for row in rows}
