"""A page of rows in the order of one index: ``(scope..., rank, position, repetition)``.

A :class:`Ranking` names the index's leading equality columns (the experiment, and a
metric for ``results_by_rank``), the ranked expression exactly as the index writes it
(the planner matches the text), and where the run id and data order are read. The order
a page shows: the rows with a rank by rank, ties in data order, then the rows without one
(an errored result, a run without a latency) in data order, in both directions.

Ascending is the index read forwards. Descending with ties ascending is not an order any
index walk gives (walked backwards, ties come last row first), so a descending page is
read in at most five index range queries: the rank at the page's offset, how many rows
rank above it, that rank's rows from the right one in data order, then the next ranks
walked backwards, whose complete tie groups are turned around and whose last, cut, group
is read forwards.

A page may start after a :class:`Cursor` (the last row of the previous page) instead of
at an offset: the same rows, without walking every entry before them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from assay.store.read.database import ReadOnlyDatabase

__all__ = [
    "Bound",
    "Cursor",
    "Entry",
    "Ranking",
    "count_ranked",
    "decode_cursor",
    "encode_cursor",
    "page_entries",
    "tied_row",
]


@dataclass(frozen=True)
class Bound:
    """Ranks strictly below (``<``) or above (``>``) ``value``."""

    op: str
    value: float


@dataclass(frozen=True)
class Cursor:
    """Where a row stands in a ranked order: its rank (None: unranked), position, repetition."""

    rank: float | None
    position: int
    repetition: int


@dataclass(frozen=True)
class Entry:
    run_id: str
    cursor: Cursor


@dataclass(frozen=True)
class Ranking:
    """One index's rows: ``table`` aliased ``alias``, ``scope`` (its equality prefix, with
    ``params``), ``rank`` (its ranked expression), ``run_id`` (the run id column)."""

    table: str
    alias: str
    scope: str
    params: tuple[Any, ...]
    rank: str
    run_id: str
    bounds: tuple[Bound, ...] = ()
    filtered: bool = False  # whether ``scope`` holds a filter checked on each entry

    def source(
        self, *, ranked: bool | None = True, bounded: bool = True, beyond: str = ""
    ) -> tuple[str, list[Any]]:
        """``FROM ... WHERE ...`` of the entries with a rank (``ranked``), without one
        (False) or both (None), within the bounds unless ``bounded`` is False. ``beyond``:
        the op (``<`` or ``>``) of a range the caller adds from a rank within the bounds,
        which implies the bounds of that op; they are left out, as two ranges of one
        side led SQLite to walk the index from the wider one (250k entries for 50)."""
        sql = f"FROM {self.table} {self.alias} WHERE {self.scope}"
        params = list(self.params)
        if ranked is not None:
            sql += f" AND {self.rank} IS {'NOT ' if ranked else ''}NULL"
        for bound in self.bounds if bounded else ():
            if bound.op != beyond:
                sql += f" AND {self.rank} {bound.op} ?"
                params.append(bound.value)
        return sql, params

    @property
    def columns(self) -> str:
        a = self.alias
        return f"{self.run_id}, {self.rank}, {a}.position, {a}.repetition"

    @property
    def data_order(self) -> str:
        return f"{self.alias}.position, {self.alias}.repetition"

    @property
    def after_key(self) -> str:
        return f"({self.alias}.position, {self.alias}.repetition) > (?, ?)"


def encode_cursor(cursor: Cursor) -> str:
    """A row's place in a ranked order, as the ``after`` parameter carries it."""
    rank = "" if cursor.rank is None else repr(float(cursor.rank))
    return f"{rank},{cursor.position},{cursor.repetition}"


def decode_cursor(text: str) -> Cursor:
    """The inverse of :func:`encode_cursor`; a ValueError naming ``after`` otherwise (the
    UI answers it with 400)."""
    parts = text.split(",")
    try:
        if len(parts) != 3:
            raise ValueError(text)
        rank = float(parts[0]) if parts[0] else None
        if rank is not None and not math.isfinite(rank):
            raise ValueError(text)
        return Cursor(rank, int(parts[1]), int(parts[2]))
    except ValueError:
        raise ValueError(
            f"parameter 'after' must be '<rank>,<position>,<repetition>' (rank empty for none), got {text!r}"
        ) from None


def count_ranked(db: ReadOnlyDatabase, ranking: Ranking) -> int:
    """How many entries rank within the bounds (an index range, counted)."""
    source, params = ranking.source()
    return int(_scalar(db, f"SELECT COUNT(*) {source}", params))


def page_entries(
    db: ReadOnlyDatabase,
    ranking: Ranking,
    *,
    descending: bool,
    limit: int,
    offset: int = 0,
    after: Cursor | None = None,
    counts: Callable[[], tuple[int, int]] | None = None,
) -> list[Entry]:
    """One page, at ``offset`` or just after ``after``. With bounds only ranked rows
    qualify, so the unranked ones never follow. ``counts``: the entries in the ranking
    and how many of them rank, when the caller knows them; a page past the middle is
    then read from the end, as its exact reverse."""
    if counts is not None and after is None:
        total, ranked = counts() if offset > _FAR else (0, 0)
        if offset * 2 > total > 0:
            return _from_end(db, ranking, limit, offset, (total, ranked), descending=descending)
    if after is not None and after.rank is None:
        return [] if ranking.bounds else _unranked(db, ranking, limit, 0, after)
    walk = _descending if descending else _ascending
    entries = walk(db, ranking, limit, offset, after)
    if len(entries) == limit or ranking.bounds:
        return entries
    if after is not None or entries:
        skip = 0
    else:
        skip = max(0, offset - count_ranked(db, ranking))
    return entries + _unranked(db, ranking, limit - len(entries), skip, None)


# Offsets below this are walked forwards whatever the size: cheaper than counting.
_FAR = 5000


def _from_end(
    db: ReadOnlyDatabase,
    ranking: Ranking,
    limit: int,
    offset: int,
    counts: tuple[int, int],
    *,
    descending: bool,
) -> list[Entry]:
    """The page at ``offset`` as the reverse of a walk from the end: the unranked rows in
    reverse data order, then the ranked ones with rank and ties both turned around (for
    ascending order a backward index walk; for descending, the descending walk mirrored)."""
    total, ranked = counts
    end = min(offset + limit, total)
    if end <= offset:
        return []
    want, skip, unranked = end - offset, total - end, total - ranked
    backwards = _backwards(ranking)
    entries: list[Entry] = []
    if skip < unranked:  # the page ends among the unranked rows
        source, params = ranking.source(ranked=False)
        sql = f"SELECT {ranking.columns} {source} ORDER BY {backwards} LIMIT ? OFFSET ?"
        entries += _entries(db.query(sql, [*params, want, skip]))
    rest, skip_ranked = want - len(entries), max(0, skip - unranked)
    if rest and descending:
        entries += _descending(db, ranking, rest, skip_ranked, None, mirrored=True)
    elif rest:
        source, params = ranking.source()
        sql = f"SELECT {ranking.columns} {source} ORDER BY {ranking.rank} DESC, {backwards} LIMIT ? OFFSET ?"
        entries += _entries(db.query(sql, [*params, rest, skip_ranked]))
    return entries[::-1]


def _backwards(ranking: Ranking) -> str:
    return f"{ranking.alias}.position DESC, {ranking.alias}.repetition DESC"


def _unranked(
    db: ReadOnlyDatabase, ranking: Ranking, limit: int, skip: int, after: Cursor | None
) -> list[Entry]:
    source, params = ranking.source(ranked=False)
    if after is not None:
        source += f" AND {ranking.after_key}"
        params += [after.position, after.repetition]
    sql = f"SELECT {ranking.columns} {source} ORDER BY {ranking.data_order} LIMIT ? OFFSET ?"
    return _entries(db.query(sql, [*params, limit, skip]))


def _ascending(
    db: ReadOnlyDatabase, ranking: Ranking, limit: int, offset: int, after: Cursor | None
) -> list[Entry]:
    source, params = ranking.source()
    order = f"ORDER BY {ranking.rank}, {ranking.data_order}"
    if after is None:
        rows = db.query(
            f"SELECT {ranking.columns} {source} {order} LIMIT ? OFFSET ?", [*params, limit, offset]
        )
        return _entries(rows)
    entries = _tied(db, ranking, after.rank, limit, 0, after)
    if len(entries) == limit:
        return entries
    source, params = ranking.source(beyond=">")
    rows = db.query(
        f"SELECT {ranking.columns} {source} AND {ranking.rank} > ? {order} LIMIT ?",
        [*params, after.rank, limit - len(entries)],
    )
    return entries + _entries(rows)


def _descending(
    db: ReadOnlyDatabase,
    ranking: Ranking,
    limit: int,
    offset: int,
    after: Cursor | None,
    *,
    mirrored: bool = False,
) -> list[Entry]:
    """Ranks descending, ties in data order; ``mirrored``: ranks ascending, ties in
    reverse data order (the descending order's reverse, read from its end)."""
    source, params = ranking.source()
    rank_order, beyond, within = ("ASC", "<", ">") if mirrored else ("DESC", ">", "<")
    if after is not None:
        top: Any = after.rank
        entries = _tied(db, ranking, top, limit, 0, after)
    else:
        first = db.query_one(
            f"SELECT {ranking.rank} {source} ORDER BY {ranking.rank} {rank_order} LIMIT 1 OFFSET ?",
            [*params, offset],
        )
        if first is None:
            return []
        top = first[0]
        above = _scalar(db, f"SELECT COUNT(*) {source} AND {ranking.rank} {beyond} ?", [*params, top])
        entries = _tied(db, ranking, top, limit, offset - int(above), None, backwards=mirrored)
    if len(entries) == limit:
        return entries
    data_order = ranking.data_order if mirrored else _backwards(ranking)
    source, params = ranking.source(beyond=within)
    below = db.query(
        f"SELECT {ranking.columns} {source} AND {ranking.rank} {within} ? "
        f"ORDER BY {ranking.rank} {rank_order}, {data_order} LIMIT ?",
        [*params, top, limit - len(entries)],
    )
    if not below:
        return entries
    last = below[-1][1]
    whole = _entries([row for row in below if row[1] != last])
    for _, group in groupby(whole, key=lambda entry: entry.cursor.rank):
        entries += reversed(list(group))
    return entries + _tied(db, ranking, last, len(below) - len(whole), 0, None, backwards=mirrored)


def _tied(
    db: ReadOnlyDatabase,
    ranking: Ranking,
    rank: Any,
    limit: int,
    skip: int,
    after: Cursor | None,
    *,
    backwards: bool = False,
) -> list[Entry]:
    """Rows ranking exactly ``rank``, in data order (after ``after`` if given), or in
    reverse data order. The bounds are left out: the rank is within them, and a range
    beside the equality led SQLite's planner to sort."""
    source, params = ranking.source(bounded=False)
    source += f" AND {ranking.rank} = ?"
    params.append(rank)
    if after is not None:
        source += f" AND {ranking.after_key}"
        params += [after.position, after.repetition]
    rows = db.query(
        f"SELECT {ranking.columns} {source} ORDER BY {_backwards(ranking) if backwards else ranking.data_order} "
        "LIMIT ? OFFSET ?",
        [*params, limit, skip],
    )
    return _entries(rows)


def tied_row(
    db: ReadOnlyDatabase, ranking: Ranking, rank: float, skip: int, *, backwards: bool
) -> Cursor | None:
    """Where the row ``skip`` rows into those ranking ``rank`` stands (counted in data
    order, or from the last one ``backwards``)."""
    found = _tied(db, ranking, rank, 1, skip, None, backwards=backwards)
    return found[0].cursor if found else None


def _entries(rows: list[Any]) -> list[Entry]:
    return [Entry(row[0], Cursor(row[1], row[2], row[3])) for row in rows]


def _scalar(db: ReadOnlyDatabase, sql: str, params: list[Any]) -> Any:
    row = db.query_one(sql, params)
    assert row is not None  # an aggregate always answers one row
    return row[0]
