"""Where a deep page starts, and which rows a filter keeps, read from the stored row
orders (``store._columns.RowOrder``) instead of walking an index to the page.

Each order holds the experiment's rows as its index does (by latency, by whether the
target failed, by a metric's rank: ranked rows by rank, ties in data order, then the
unranked ones), each row as a key ``position * stride + repetition``. The rows a filter
keeps are a set of keys: the failing rows a union of ranges (the errored targets, each
metric's errored results, each failing test's rank range), a metric's bound one range.
The row just before a page, in the page's order among the kept rows, is then an array
lookup (numpy), and the page is read after it as its "previous" link would read it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.store import _columns as columns
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.walk import Bound, Cursor

__all__ = ["Order", "data_cursor", "failing_keys", "keys_within", "load", "ranked_cursor"]


@dataclass(frozen=True)
class Order:
    stride: int
    ranked: int
    errored: int
    keys: Any  # int64, every row's key in the order
    ranks: Any  # float64, the ranked rows' ranks (None: not read)

    def cursor(self, key: int, rank: float | None) -> Cursor:
        return Cursor(rank, int(key) // self.stride, int(key) % self.stride)


def load(
    db: ReadOnlyDatabase, experiment_id: str, names: Sequence[str], *, ranked: Sequence[str] | None = None
) -> dict[str, Order] | None:
    """The stored orders ``names`` of the experiment's built column set (the ranks only of
    those ``ranked``, None: of all; 8 bytes a row each), or None when one is missing (no
    set, or one built before orders were stored). Kept per reader while the set stands."""
    import numpy as np

    with_ranks = set(names if ranked is None else ranked)

    built = db.query_one(
        "SELECT built_at FROM metric_column_sets WHERE experiment_id = ? AND built_at IS NOT NULL",
        (experiment_id,),
    )
    if built is None:
        return None
    at = (experiment_id, str(built[0]))
    with _lock:
        kept = dict(_kept.setdefault(db, {}).get(at, {}))
    missing = [
        name for name in names if name not in kept or (name in with_ranks and kept[name].ranks is None)
    ]
    if missing:
        wanted = sorted(with_ranks & set(missing))
        rows = db.query(
            f"SELECT name, stride, ranked, errored, keys, "
            f"CASE WHEN name IN ({', '.join('?' * len(wanted)) or 'NULL'}) THEN ranks END FROM row_orders "
            f"WHERE experiment_id = ? AND name IN ({', '.join('?' * len(missing))})",
            [*wanted, experiment_id, *missing],
        )
        for name, stride, count, errored, keys, ranks in rows:
            kept[name] = Order(
                int(stride),
                int(count),
                int(errored),
                np.frombuffer(bytes(keys), dtype=np.int64),
                None if ranks is None else np.frombuffer(bytes(ranks), dtype=np.float64),
            )
        with _lock:
            sets = _kept.setdefault(db, {})
            while len(sets) >= _KEPT_SETS and at not in sets:
                sets.pop(next(iter(sets)))
            sets[at] = kept
    if not set(names) <= kept.keys():
        return None
    return {name: kept[name] for name in names}


_KEPT_SETS = 2
_lock = threading.Lock()
_kept: weakref.WeakKeyDictionary[ReadOnlyDatabase, dict[tuple[str, str], dict[str, Order]]] = (
    weakref.WeakKeyDictionary()
)


def metric_names(db: ReadOnlyDatabase, experiment_id: str) -> list[str]:
    """The orders of every metric with results (stored with the set)."""
    rows = db.query(
        "SELECT name FROM row_orders WHERE experiment_id = ? AND name LIKE 'metric:%'", (experiment_id,)
    )
    return sorted(str(row[0]) for row in rows)


def _span(ranks: Any, op: str, value: float) -> tuple[int, int]:
    """The ranked rows (ranks ascending) whose rank compares with ``value`` by ``op``."""
    import numpy as np

    if op in ("<", "<="):
        return 0, int(np.searchsorted(ranks, value, side="left" if op == "<" else "right"))
    return int(np.searchsorted(ranks, value, side="right" if op == ">" else "left")), len(ranks)


def keys_within(order: Order, bounds: Sequence[Bound]) -> Any:
    """The keys of the rows whose rank is within every bound."""
    start, end = 0, order.ranked
    for bound in bounds:
        low, high = _span(order.ranks, bound.op, bound.value)
        start, end = max(start, low), min(end, high)
    return order.keys[start : max(start, end)]


def failing_keys(
    db: ReadOnlyDatabase, experiment_id: str, tests: Sequence[tuple[str, str, float]]
) -> tuple[Any, int] | None:
    """The keys of the failing rows, sorted (as ``failing.FAILED`` keeps them: the target
    failed, a result errored, or a score of a test's key compares with its value by its
    op), and the size of the key space; None without stored orders."""
    names = ["error", *metric_names(db, experiment_id)]
    scored = [columns.metric_order(key) for key, _, _ in tests]
    found = load(db, experiment_id, names, ranked=[name for name in scored if name in names])
    if found is None:
        return None
    runs = found["error"]
    parts = [runs.keys[runs.ranked - runs.errored : runs.ranked]]
    for name in names[1:]:
        order = found[name]
        parts.append(order.keys[order.ranked : order.ranked + order.errored])
    for key, op, value in tests:
        tested = found.get(columns.metric_order(key))
        if tested is not None:  # a metric without results fails no row
            low, high = _span(tested.ranks[: tested.ranked], op, value)
            parts.append(tested.keys[low:high])
    size = int(runs.keys.max()) + 1 if len(runs.keys) else 0
    return union(parts, size), size


def union(parts: Sequence[Any], size: int) -> Any:
    """The sorted distinct keys of ``parts`` (keys below ``size``): a bitmap where the key
    space is dense, else a sort."""
    import numpy as np

    total = sum(len(part) for part in parts)
    if size > 8 * max(total, 1024):
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    seen = np.zeros(size, dtype=bool)
    for part in parts:
        seen[part] = True
    return np.flatnonzero(seen).astype(np.int64)


def kept_mask(keys: Any, wanted: Any, size: int) -> Any:
    """Which of ``keys`` are among ``wanted`` (sorted)."""
    import numpy as np

    if size > 8 * max(len(keys), 1024):
        return np.isin(keys, wanted)
    seen = np.zeros(size, dtype=bool)
    seen[wanted] = True
    return seen[keys]


def ranked_cursor(order: Order, index: int, *, descending: bool, keep: Any = None) -> Cursor | None:
    """The row at ``index`` of the order's kept rows (``keep``: a mask of its rows, None:
    all) in the page's order: ranked rows by rank (descending: ranks descending, ties
    still in data order), then the unranked ones in data order."""
    import numpy as np

    ranks, keys = order.ranks[: order.ranked], order.keys[: order.ranked]
    if keep is not None:
        ranks, keys = ranks[keep[: order.ranked]], keys[keep[: order.ranked]]
    if index >= len(ranks):
        rest = order.keys[order.ranked :]
        rest = np.sort(rest if keep is None else rest[keep[order.ranked :]])
        at = index - len(ranks)
        return order.cursor(rest[at], None) if at < len(rest) else None
    if not descending:
        return order.cursor(keys[index], float(ranks[index]))
    rank = ranks[len(ranks) - 1 - index]
    first, after = np.searchsorted(ranks, rank, side="left"), np.searchsorted(ranks, rank, side="right")
    at = int(first) + index - (len(ranks) - int(after))
    return order.cursor(keys[at], float(rank))


def data_cursor(kept: Any, stride: int, index: int, *, descending: bool) -> Cursor | None:
    """The row at ``index`` of the kept rows (sorted keys) in data order: by position,
    then repetition; ``descending``: positions descending, repetitions still ascending."""
    import numpy as np

    if index >= len(kept):
        return None
    if not descending:
        key = int(kept[index])
    else:
        position = int(kept[len(kept) - 1 - index]) // stride
        first = int(np.searchsorted(kept, position * stride, side="left"))
        end = int(np.searchsorted(kept, (position + 1) * stride, side="left"))
        key = int(kept[first + index - (len(kept) - end)])
    return Cursor(None, key // stride, key % stride)
