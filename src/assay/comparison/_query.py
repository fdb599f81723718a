"""The SQL behind a paired comparison: per metric, sums over paired examples.

Each side's scores are first averaged per example (repetitions become one number per
example), then the two sides are joined on the example. Only sums leave the database,
so the cost in Python does not grow with the number of rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Optional

from assay.store._json import loads
from assay.store.base import Store

# One row per (metric, example) of one experiment: the mean of its scored repetitions.
_SIDE = """
    SELECT r.key AS key, u.example_id AS ex, AVG(r.score) AS s, COUNT(*) AS k,
           MIN(r.score = 0.0 OR r.score = 1.0) AS bin
    FROM results r JOIN runs u ON u.id = r.run_id
    WHERE r.experiment_id = ? AND r.error IS NULL AND r.score IS NOT NULL
    GROUP BY r.key, u.example_id
"""

_PAIRED = f"""
    WITH a AS ({_SIDE}), b AS ({_SIDE})
    SELECT COALESCE(a.key, b.key) AS key,
           COUNT(a.ex) AS scored_a, COUNT(b.ex) AS scored_b,
           SUM(a.ex IS NOT NULL AND b.ex IS NOT NULL) AS n,
           SUM(CASE WHEN b.ex IS NOT NULL THEN a.s END) AS sum_a,
           SUM(CASE WHEN a.ex IS NOT NULL THEN b.s END) AS sum_b,
           SUM(b.s - a.s) AS sum_d, SUM((b.s - a.s) * (b.s - a.s)) AS sum_dd,
           COALESCE(MIN(a.bin AND b.bin AND a.k = 1 AND b.k = 1), 0) AS binary,
           TOTAL(a.s = 1 AND b.s = 1) AS both_pass, TOTAL(a.s = 1 AND b.s = 0) AS only_a,
           TOTAL(a.s = 0 AND b.s = 1) AS only_b, TOTAL(a.s = 0 AND b.s = 0) AS neither,
           MAX(a.k) > 1 OR MAX(b.k) > 1 AS repeated
    FROM a FULL JOIN b ON b.key = a.key AND b.ex = a.ex
    GROUP BY COALESCE(a.key, b.key)
"""

_CLUSTERED = f"""
    WITH a AS ({_SIDE}), b AS ({_SIDE}),
    clusters AS (
        SELECT id AS ex, COALESCE(json_extract(metadata, ?), 'example:' || id) AS cluster
        FROM examples WHERE dataset_id = ? GROUP BY id
    )
    SELECT a.key AS key, COUNT(*) AS n, SUM(b.s - a.s) AS sum_d
    FROM a JOIN b ON b.key = a.key AND b.ex = a.ex
    LEFT JOIN clusters c ON c.ex = a.ex
    GROUP BY a.key, COALESCE(c.cluster, 'example:' || a.ex)
"""

# Per metric of one experiment: how its results divide into the three outcomes.
_OUTCOMES = """
    SELECT r.key AS key, SUM(r.error IS NULL AND r.score IS NOT NULL) AS scored,
           SUM(r.error IS NOT NULL) AS errors,
           SUM(r.error IS NULL AND r.score IS NULL AND u.error IS NOT NULL) AS skipped
    FROM results r JOIN runs u ON u.id = r.run_id
    WHERE r.experiment_id = ?
    GROUP BY r.key ORDER BY MIN(r.pk)
"""


@dataclass(frozen=True)
class PairedSums:
    key: str
    scored_a: int
    scored_b: int
    n: int
    sum_a: float
    sum_b: float
    sum_d: float
    sum_dd: float
    binary: bool
    both_pass: int
    only_a: int
    only_b: int
    neither: int
    repeated: bool


@dataclass(frozen=True)
class Outcomes:
    scored: int
    errors: int
    skipped: int


@dataclass(frozen=True)
class SideFacts:
    """What one experiment holds: rows, failed target calls, outcomes and metric metadata."""

    rows: int
    target_failures: int
    outcomes: dict[str, Outcomes]
    metric_info: dict[str, dict[str, Any]]


@contextmanager
def reading(store: Store) -> Iterator[sqlite3.Connection]:
    """One consistent read of a SQLite store (a running experiment may be writing)."""
    snapshot = getattr(store, "snapshot", None)
    if snapshot is None:
        raise TypeError(f"assay.compare reads SQLite stores; {type(store).__name__} is not one")
    with snapshot() as conn:
        yield conn


def paired_sums(conn: sqlite3.Connection, a: str, b: str) -> list[PairedSums]:
    rows = conn.execute(_PAIRED, (a, b)).fetchall()
    return [
        PairedSums(
            key=row["key"],
            scored_a=row["scored_a"],
            scored_b=row["scored_b"],
            n=row["n"],
            sum_a=row["sum_a"] or 0.0,
            sum_b=row["sum_b"] or 0.0,
            sum_d=row["sum_d"] or 0.0,
            sum_dd=row["sum_dd"] or 0.0,
            binary=bool(row["binary"]) and row["n"] > 0,
            both_pass=int(row["both_pass"]),
            only_a=int(row["only_a"]),
            only_b=int(row["only_b"]),
            neither=int(row["neither"]),
            repeated=bool(row["repeated"]),
        )
        for row in rows
    ]


def cluster_sums(
    conn: sqlite3.Connection, a: str, b: str, dataset_id: str, metadata_key: str
) -> dict[str, list[tuple[int, float]]]:
    path = '$."' + metadata_key.replace('"', '\\"') + '"'
    sums: dict[str, list[tuple[int, float]]] = {}
    for row in conn.execute(_CLUSTERED, (a, b, path, dataset_id)):
        sums.setdefault(row["key"], []).append((int(row["n"]), float(row["sum_d"])))
    return sums


def side_facts(conn: sqlite3.Connection, experiment_id: str) -> SideFacts:
    rows, failures = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(error IS NOT NULL), 0) FROM runs WHERE experiment_id = ?",
        (experiment_id,),
    ).fetchone()
    outcomes = {
        row["key"]: Outcomes(int(row["scored"]), int(row["errors"]), int(row["skipped"]))
        for row in conn.execute(_OUTCOMES, (experiment_id,))
    }
    return SideFacts(
        int(rows), int(failures), outcomes, {key: _metric_info(conn, experiment_id, key) for key in outcomes}
    )


# The metric metadata of a metric's first result that has any: an evaluator declares it on
# every result it returns, so a look at the first few (bounded) speaks for all.
METRIC_INFO_SQL = (
    "SELECT evaluator_info FROM (SELECT evaluator_info FROM results WHERE experiment_id = ? "
    "AND key = ? LIMIT 100) WHERE evaluator_info IS NOT NULL LIMIT 1"
)


def decode_metric_info(row: Any) -> dict[str, Any]:
    info: Optional[dict[str, Any]] = loads(row[0]) if row is not None else None
    return info if isinstance(info, dict) else {}


def _metric_info(conn: sqlite3.Connection, experiment_id: str, key: str) -> dict[str, Any]:
    return decode_metric_info(conn.execute(METRIC_INFO_SQL, (experiment_id, key)).fetchone())
