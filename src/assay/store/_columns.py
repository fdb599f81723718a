"""Stored metric columns: per (experiment, metric), that metric's results as compact arrays.

A paired comparison of two million-row experiments in SQL is one B-tree lookup per row and
metric; with the columns it is two blob reads and a few vectorized passes. Per metric the
columns hold, in the pair index's order (example id, repetition): the example ids
(16-byte UUIDs, or fixed-width UTF-8 when an id is not a canonical UUID), repetitions
(int32), scores (float64, NaN where none) and an outcome code (``SCORED``, ``ERRORED``,
``UNSCORED``); plus facts read for free: the result count and whether every row holds
exactly one result of the metric, whether no (example, repetition) holds two, and a
digest of the key columns, so that two experiments with the same keys are paired
without reading them.

They are only ever correct: every write of an experiment's runs or results removes its
columns in the same transaction (``invalidate``), and a build (``refresh``) stores what
it read only if no such write came between its read and its store. This module uses
the standard library alone: a finishing run never imports numpy, and the SQLite writer
process, which builds a run's columns after its last commit, loads it by path. A
comparison reads the columns with numpy.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import islice
from typing import Any

SCORED, ERRORED, UNSCORED = 0, 1, 2
UUID_FORMAT = "uuid"

# The covering pair index in order; an unscored result's error is looked up by its key.
_SCAN = """
    SELECT example_id, repetition, score,
           CASE WHEN score IS NOT NULL THEN 0
                WHEN (SELECT e.error FROM results e WHERE e.pk = r.pk) IS NOT NULL THEN 1
                ELSE 2 END
    FROM results r
    WHERE r.experiment_id = ? AND r.key = ?
    ORDER BY r.example_id, r.repetition
"""
_KEYS = "SELECT DISTINCT key FROM results WHERE experiment_id = ?"
_CHUNK = 65536


@dataclass(frozen=True)
class MetricColumns:
    """One metric's stored columns, as bytes (``numpy.frombuffer`` reads them)."""

    key: str
    results: int
    one_per_row: bool
    unique_keys: bool  # no (example, repetition) holds two results of the metric
    keys_digest: str  # of the example ids and repetitions: equal digests, equal keys
    id_format: str  # "uuid" (16 bytes each) or "text:<width>"
    example_ids: bytes  # empty when loaded without keys
    repetitions: bytes
    scores: bytes
    outcomes: bytes

    @property
    def id_width(self) -> int:
        return 16 if self.id_format == UUID_FORMAT else int(self.id_format.split(":")[1])


@dataclass(frozen=True)
class RowOrder:
    """The experiment's rows in one order a page is sorted in (``ORDERS``, or
    ``metric:<key>``), as its index holds them: the ranked rows by rank, ties in data
    order, then the unranked ones (an errored result first, then the rest), each in data
    order. ``keys``: each row's ``position * stride + repetition`` (int64), ``ranks`` the
    ranked rows' ranks (float64)."""

    name: str
    stride: int
    ranked: int
    # A metric's order: its unranked rows whose result errored (the first unranked ones);
    # the errored order: its errored runs (the last ranked ones, rank 1); else 0.
    errored: int
    keys: bytes
    ranks: bytes


@dataclass(frozen=True)
class ColumnSet:
    """Every metric's columns of one experiment, and what the set was built from."""

    runs: int
    repeated: bool  # any run with a repetition above 0
    metrics: dict[str, MetricColumns]
    orders: dict[str, RowOrder] = field(default_factory=dict)


def invalidate(conn: Any, experiment_ids: Iterable[str]) -> None:
    """Drop the columns of experiments whose runs or results are being written (call
    inside the writing transaction)."""
    for experiment_id in set(experiment_ids):
        conn.execute("DELETE FROM metric_column_sets WHERE experiment_id = ?", (experiment_id,))
        conn.execute("DELETE FROM metric_columns WHERE experiment_id = ?", (experiment_id,))
        conn.execute("DELETE FROM row_orders WHERE experiment_id = ?", (experiment_id,))


def refresh(store: Any, experiment_id: str) -> ColumnSet | None:
    """Build and store an experiment's columns without holding the write lock while its
    rows are read (seconds at a million rows; other writers wait at most a moment): a
    pending mark is written, the columns are read from a snapshot, and stored only if
    the mark survived, that is if no write of the experiment (which drops the mark with
    the columns) came in between. None when one did."""
    with store.transaction() as conn:
        mark_pending(conn, experiment_id)
    return build_marked(store, experiment_id)


def mark_pending(conn: Any, experiment_id: str) -> None:
    """The first step of ``refresh`` (inside a write transaction): drop what is stored,
    and mark a build as pending."""
    invalidate(conn, [experiment_id])
    conn.execute(
        "INSERT INTO metric_column_sets (experiment_id, runs, repeated, built_at) VALUES (?, 0, 0, NULL)",
        (experiment_id,),
    )


def build_marked(store: Any, experiment_id: str) -> ColumnSet | None:
    """The rest of ``refresh``: read the columns from a snapshot, and store them if the
    pending mark is still there. ``store`` is anything with ``transaction()`` and
    ``snapshot()`` (the SQLite writer process has its own)."""
    with store.snapshot() as conn:
        built = read(conn, experiment_id)
    # PostgreSQL: the mark locked, so that of two builders (a run's, a comparison's) the
    # second sees the first's columns stored once it may go on, instead of storing its own twice
    lock = getattr(store, "_LOCK_FOR_WRITE", "")
    with store.transaction() as conn:
        # PostgreSQL: the experiment's row first, as a delete of the experiment takes it
        # first (then the mark, by its cascade); taken after the mark, each waited for the other
        held = conn.execute(
            f"SELECT 1 FROM experiments WHERE id = ?{getattr(store, '_LOCK_AGAINST_DELETE', '')}",
            (experiment_id,),
        ).fetchone()
        if held is None:
            return None
        pending = conn.execute(
            f"SELECT 1 FROM metric_column_sets WHERE experiment_id = ? AND built_at IS NULL{lock}",
            (experiment_id,),
        ).fetchone()
        if pending is None:
            return None
        _write(conn, experiment_id, built)
    return built


def has_set(conn: Any, experiment_id: str) -> bool:
    """Whether the experiment's columns are stored, or their build is pending."""
    found = conn.execute("SELECT 1 FROM metric_column_sets WHERE experiment_id = ?", (experiment_id,))
    return found.fetchone() is not None


def read(conn: Any, experiment_id: str) -> ColumnSet:
    """An experiment's columns, read (not stored): one ordered scan of the covering pair
    index per metric."""
    runs, repeated = conn.execute(
        "SELECT COUNT(*), COALESCE(MAX(repetition), 0) > 0 FROM runs WHERE experiment_id = ?",
        (experiment_id,),
    ).fetchone()
    metrics = {}
    for (key,) in conn.execute(_KEYS, (experiment_id,)).fetchall():
        metrics[key] = _scan(conn, experiment_id, key, int(runs))
    stride = _stride(conn, experiment_id)
    orders = {
        name: _order(conn, experiment_id, name, stride) for name in [*ORDERS, *map(metric_order, metrics)]
    }
    return ColumnSet(int(runs), bool(repeated), metrics, orders)


def _write(conn: Any, experiment_id: str, built: ColumnSet) -> None:
    """Store ``built`` over the experiment's pending mark."""
    conn.execute(
        "UPDATE metric_column_sets SET runs = ?, repeated = ?, built_at = ? WHERE experiment_id = ?",
        (built.runs, int(built.repeated), datetime.now(timezone.utc).isoformat(), experiment_id),
    )
    for column in built.metrics.values():
        conn.execute(
            "INSERT INTO metric_columns (experiment_id, key, results, one_per_row, unique_keys, "
            "keys_digest, id_format, example_ids, repetitions, scores, outcomes) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                experiment_id,
                column.key,
                column.results,
                int(column.one_per_row),
                int(column.unique_keys),
                column.keys_digest,
                column.id_format,
                column.example_ids,
                column.repetitions,
                column.scores,
                column.outcomes,
            ),
        )
    _write_orders(conn, experiment_id, built.orders.values())


def _write_orders(conn: Any, experiment_id: str, orders: Iterable[RowOrder]) -> None:
    for order in orders:
        conn.execute(
            "INSERT INTO row_orders (experiment_id, name, stride, ranked, errored, keys, ranks) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (experiment_id, order.name, order.stride, order.ranked, order.errored, order.keys, order.ranks),
        )


def load(
    conn: Any, experiment_id: str, keys: Iterable[str] | None = None, *, with_keys: bool = True
) -> ColumnSet | None:
    """The stored columns of an experiment (only of the metrics ``keys`` when given), or
    None when none are stored. ``with_keys=False`` leaves the example ids and repetitions
    unread (empty)."""
    head = conn.execute(
        "SELECT runs, repeated FROM metric_column_sets WHERE experiment_id = ? AND built_at IS NOT NULL",
        (experiment_id,),
    ).fetchone()
    if head is None:
        return None
    key_columns = "example_ids, repetitions" if with_keys else "NULL, NULL"
    sql = (
        f"SELECT key, results, one_per_row, unique_keys, keys_digest, id_format, {key_columns}, "
        "scores, outcomes FROM metric_columns WHERE experiment_id = ?"
    )
    params: list[Any] = [experiment_id]
    if keys is not None:
        wanted = list(keys)
        sql += f" AND key IN ({', '.join('?' * len(wanted))})" if wanted else " AND 0 = 1"
        params += wanted
    metrics = {}
    for row in conn.execute(sql, params).fetchall():
        metrics[row[0]] = MetricColumns(
            row[0],
            int(row[1]),
            bool(row[2]),
            bool(row[3]),
            row[4],
            row[5],
            *(bytes(v or b"") for v in row[6:10]),
        )
    return ColumnSet(int(head[0]), bool(head[1]), metrics)


def one_result_per_row(conn: Any, experiment_id: str, key: str) -> bool | None:
    """The stored fact, or None when the experiment has no stored columns."""
    row = conn.execute(
        "SELECT c.one_per_row FROM metric_column_sets s LEFT JOIN metric_columns c "
        "ON c.experiment_id = s.experiment_id AND c.key = ? "
        "WHERE s.experiment_id = ? AND s.built_at IS NOT NULL",
        (key, experiment_id),
    ).fetchone()
    if row is None:
        return None
    return bool(row[0])  # a metric without results: no row holds one


def _scan(conn: Any, experiment_id: str, key: str, runs: int) -> MetricColumns:
    read = _read(conn, experiment_id, key, as_uuid=True) or _read(conn, experiment_id, key, as_uuid=False)
    assert read is not None  # the text form takes any id
    id_format, id_bytes, reps, scores, outcomes, pairs = read
    results = len(scores)
    rep_bytes = reps.tobytes()
    digest = hashlib.blake2b(id_format.encode(), digest_size=16)
    digest.update(len(id_bytes).to_bytes(8, "little") + id_bytes + rep_bytes)
    return MetricColumns(
        key=key,
        results=results,
        one_per_row=results == runs and pairs == runs,
        unique_keys=pairs == results,
        keys_digest=digest.hexdigest(),
        id_format=id_format,
        example_ids=id_bytes,
        repetitions=rep_bytes,
        scores=scores.tobytes(),
        outcomes=outcomes.tobytes(),
    )


def _read(
    conn: Any, experiment_id: str, key: str, *, as_uuid: bool
) -> tuple[str, bytes, array[int], array[float], array[int], int] | None:
    """One ordered scan, a chunk at a time, into stdlib arrays (no numpy: importing it
    would cost a finishing run ~0.3 s of CPU); also the number of distinct (example,
    repetition) pairs. None when an id is not a canonical UUID text and ``as_uuid``
    asked for that form."""
    ids: list[bytes] = []
    repetitions, scores, outcomes = array("i"), array("d"), array("b")
    pairs, last = 0, None
    cursor = iter(conn.execute(_SCAN, (experiment_id, key)))
    while chunk := list(islice(cursor, _CHUNK)):
        chunk_ids, chunk_reps, chunk_scores, chunk_outcomes = zip(*chunk)
        if as_uuid:
            packed = _uuid_bytes(chunk_ids)
            if packed is None:
                return None
            ids.append(packed)
        else:
            ids.extend(str(t if t is not None else "").encode() for t in chunk_ids)
        for pair in zip(chunk_ids, chunk_reps):
            pairs += pair != last
            last = pair
        repetitions.extend(chunk_reps)
        scores.extend(_NAN if score is None else score for score in chunk_scores)
        outcomes.extend(chunk_outcomes)
    if as_uuid:
        id_format, id_bytes = UUID_FORMAT, b"".join(ids)
    else:
        width = max((len(text) for text in ids), default=1) or 1
        id_format, id_bytes = f"text:{width}", b"".join(text.ljust(width, b"\0") for text in ids)
    return id_format, id_bytes, repetitions, scores, outcomes, pairs


# The runs' orders: their index's ranked expression, as the index writes it.
ORDERS = {
    "latency": "u.latency_ms",
    "error": "CASE WHEN u.error IS NULL THEN 0 ELSE 1 END",
}
# A metric's: ``results_by_rank``'s (an errored result has no rank).
METRIC_RANK = "CASE WHEN r.error IS NULL THEN r.score END"


def metric_order(key: str) -> str:
    return f"metric:{key}"


def _stride(conn: Any, experiment_id: str) -> int:
    """One more than the highest repetition: a row's key is ``position * stride + repetition``."""
    row = conn.execute(
        "SELECT MAX(repetition) FROM runs WHERE experiment_id = ?", (experiment_id,)
    ).fetchone()
    return int(row[0] or 0) + 1


def _order(conn: Any, experiment_id: str, name: str, stride: int) -> RowOrder:
    """One order, read in two ranges of its index (no row visited but an unranked
    result's, for its error): the ranked rows, then the unranked ones."""
    if name in ORDERS:
        source, params, rank, errored = (
            "FROM runs u WHERE u.experiment_id = ?",
            [experiment_id],
            ORDERS[name],
            "0",
        )
        alias = "u"
    else:
        source = "FROM results r WHERE r.experiment_id = ? AND r.key = ?"
        params, rank, alias = [experiment_id, name.removeprefix("metric:")], METRIC_RANK, "r"
        errored = "CASE WHEN r.error IS NULL THEN 0 ELSE 1 END"
    place = f"{alias}.position * ? + {alias}.repetition"
    data_order = f"{alias}.position, {alias}.repetition"
    ranks, keys = array("d"), array("q")
    ranked = iter(
        conn.execute(
            f"SELECT {rank}, {place} {source} AND {rank} IS NOT NULL ORDER BY {rank}, {data_order}",
            [stride, *params],
        )
    )
    while chunk := list(islice(ranked, _CHUNK)):
        chunk_ranks, chunk_keys = zip(*chunk)
        ranks.extend(chunk_ranks)
        keys.extend(chunk_keys)
    unranked = conn.execute(
        f"SELECT {errored}, {place} {source} AND {rank} IS NULL ORDER BY {data_order}", [stride, *params]
    ).fetchall()
    failed = [row[1] for row in unranked if row[0]]
    keys.extend(failed)
    keys.extend(row[1] for row in unranked if not row[0])
    errored_rows = ranks.count(1.0) if name == "error" else len(failed)
    return RowOrder(name, stride, len(ranks), errored_rows, keys.tobytes(), ranks.tobytes())


_NAN = float("nan")
_DASHES = (8, 13, 18, 23)


def _uuid_bytes(texts: tuple[Any, ...]) -> bytes | None:
    """The 16-byte forms of ids when every one is a canonical (lowercase) UUID text, whose
    byte order is the text's order: checked and converted a chunk at a time in C
    (string slices, ``bytes.fromhex``), no Python work per id beyond its type and length."""
    if not all(isinstance(text, str) and len(text) == 36 for text in texts):
        return None
    joined = "".join(texts)
    count = len(texts)
    if not joined.isascii() or any(joined[at::36] != "-" * count for at in _DASHES):
        return None
    digits = joined.replace("-", "")
    if len(digits) != 32 * count or any(c in digits for c in "ABCDEF"):
        return None
    try:
        packed = bytes.fromhex(digits)
    except ValueError:
        return None
    return packed if len(packed) == 16 * count else None  # fromhex skips whitespace
