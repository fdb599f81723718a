"""Where a deep page starts: of a metric sort, found in the stored metric columns
(``cursor_before``); of any sort under any filter the stored row orders tell, found in
them (``order_cursor``, by way of ``orders``).

A page reached by its number (``offset``) used to walk the metric's index up to it:
half a million entries for a middle page of a million rows (1-4 s on a first view). The
experiment's stored columns (``store._columns``) hold every row's score of the metric;
with numpy they give the rank of the row just before the page (the ``offset``-th ranked
row: a partition, no sort) and how many rows rank strictly before that rank. Its row is
then found among the rows tied on that rank (an index range in data order, read from
its nearer end), and the page is read after it as its "previous" link would read it
(``walk``'s keyset path): a few index seeks whatever the offset.

Only the pages that columns describe exactly are sought: the metric holds one result
per row, none errored with a score kept (``stored_counts`` checks both), and the page is
of the metric's ranked rows (a bound on the metric itself is a mask of its scores, the
failing rows a mask of every metric's, as ``stored_counts`` counts them; any other
filter, and the unranked rows after the ranked ones, are walked as before).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.store import _columns as columns
from assay.store.read import orders, stored_counts
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.walk import Bound, Cursor, Ranking, tied_row

__all__ = ["DEEP", "FailingRows", "Kept", "cursor_before", "order_cursor"]

# Offsets up to this are walked: cheaper than reading a metric's scores (8 bytes a row).
DEEP = 5000


@dataclass(frozen=True)
class FailingRows:
    """The page's rows are the failing ones: ``keys`` every metric of the experiment,
    ``tests`` the scores that fail (``failing.Failing.tests``)."""

    keys: list[str]
    tests: list[tuple[str, str, float]]


def cursor_before(
    db: ReadOnlyDatabase,
    experiment_id: str,
    key: str,
    ranking: Ranking,
    *,
    descending: bool,
    offset: int,
    failing: FailingRows | None = None,
) -> Cursor | None:
    """The cursor of the row at ``offset - 1`` of the metric's ranked rows within the
    ranking's bounds (and ``failing``, the filter of a filtered ranking), in the page's
    order; None when the columns cannot tell (then the caller walks)."""
    if offset <= 0 or (ranking.filtered and failing is None):
        return None
    scores = _ranked_scores(db, experiment_id, key, ranking.bounds, failing)
    if scores is None or offset > len(scores):
        return None  # no columns, or the row is among the unranked: walked
    rank, before, ties = _rank_at(scores, offset - 1, descending=descending)
    within = offset - 1 - before
    if within * 2 < ties:
        return tied_row(db, ranking, rank, within, backwards=False)
    return tied_row(db, ranking, rank, ties - 1 - within, backwards=True)


def _ranked_scores(
    db: ReadOnlyDatabase, experiment_id: str, key: str, bounds: tuple[Bound, ...], failing: FailingRows | None
) -> Any:
    """The metric's scores of the rows with a rank (errored and unscored results have
    none) within ``bounds`` (and failing), or None when the stored columns do not
    answer exactly."""
    import numpy as np

    keys = [key] if failing is None else failing.keys
    if failing is not None and (
        key not in keys or not stored_counts.results_answer_failing(db, experiment_id, keys)
    ):
        return None
    scored = sorted({key, *(test[0] for test in failing.tests)} if failing else {key})
    found = stored_counts.usable(db, experiment_id, keys, scored=scored)
    if found is None:
        return None
    scores, _ = found[key]
    keep = ~np.isnan(scores)
    for bound in bounds:
        keep &= stored_counts.compared(scores, bound.op, bound.value)
    if failing is not None:
        keep &= stored_counts.failing_by_results(found, failing.tests)
    return scores[keep]


def _rank_at(scores: Any, index: int, *, descending: bool) -> tuple[float, int, int]:
    """The rank of the ``index``-th row in rank order (ascending, or descending), how
    many rows rank strictly before it, and how many share it."""
    import numpy as np

    at = len(scores) - 1 - index if descending else index
    rank = float(np.partition(scores, at)[at])
    before = int((scores > rank).sum()) if descending else int((scores < rank).sum())
    return rank, before, int((scores == rank).sum())


@dataclass(frozen=True)
class Kept:
    """Which rows a page keeps, as the stored orders tell them: the failing ones (``tests``:
    ``failing.Failing.tests``), or those of ``metric`` within ``bounds``, or every row."""

    tests: list[tuple[str, str, float]] | None = None
    metric: str | None = None
    bounds: tuple[Bound, ...] = ()


def order_cursor(
    db: ReadOnlyDatabase, experiment_id: str, sort: str, kept: Kept, *, descending: bool, offset: int
) -> Cursor | None:
    """The cursor of the row at ``offset - 1`` of the kept rows in the page's order (a
    run sort, a metric's, or data order: ``sort`` ``position``), from the stored row
    orders; None when they are not stored (then the caller walks)."""
    if offset <= 0:
        return None
    name = "error" if sort == "position" else sort  # any order holds every row
    found = orders.load(db, experiment_id, [name], ranked=[] if sort == "position" else None)
    if found is None:
        return None
    order = found[name]
    size = int(order.keys.max()) + 1 if len(order.keys) else 0
    wanted = _kept_keys(db, experiment_id, kept, size)
    if wanted is _UNKNOWN:
        return None
    if sort == "position":
        every = wanted if wanted is not None else orders.union([order.keys], size)
        return orders.data_cursor(every, order.stride, offset - 1, descending=descending)
    keep = None if wanted is None else orders.kept_mask(order.keys, wanted, size)
    return orders.ranked_cursor(order, offset - 1, descending=descending, keep=keep)


_UNKNOWN: Any = object()


def _kept_keys(db: ReadOnlyDatabase, experiment_id: str, kept: Kept, size: int) -> Any:
    """The sorted keys of the kept rows; None: every row; ``_UNKNOWN``: not stored."""
    if kept.tests is not None:
        if kept.metric is not None:
            return _UNKNOWN
        failing = orders.failing_keys(db, experiment_id, kept.tests)
        return _UNKNOWN if failing is None else failing[0]
    if kept.metric is None:
        return None
    name = columns.metric_order(kept.metric)
    found = orders.load(db, experiment_id, [name])
    if found is None:
        return _UNKNOWN
    return orders.union([orders.keys_within(found[name], kept.bounds)], size)
