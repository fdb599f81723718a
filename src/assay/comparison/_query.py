"""The SQL behind a paired comparison: per metric, sums over paired examples.

Each side's scores are first averaged per example (repetitions become one number per
example), in one grouping of both sides' results by (metric, example). Only sums leave the database,
so the cost in Python does not grow with the number of rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from assay.store._json import loads
from assay.store.base import Store

# One row per (metric, example) over both experiments: the mean of each side's scored
# repetitions. One pass over the results of both, grouped once (no join of two halves).
_PER_EXAMPLE = """
    SELECT r.key AS key, u.example_id AS ex,
           AVG(CASE WHEN r.experiment_id = :a THEN r.score END) AS sa,
           AVG(CASE WHEN r.experiment_id = :b THEN r.score END) AS sb,
           SUM(r.experiment_id = :a) AS ka, SUM(r.experiment_id = :b) AS kb,
           MIN(r.score = 0.0 OR r.score = 1.0) AS bin
    FROM results r JOIN runs u ON u.id = r.run_id
    WHERE r.experiment_id IN (:a, :b) AND r.error IS NULL AND r.score IS NOT NULL
    GROUP BY r.key, u.example_id
"""

# With one repetition per example, rows pair through the runs' (experiment, example,
# repetition) index and each metric's sums come out without sorting the rows. B's
# scored count comes from the metric index apart (rows of B with no row in A).
_PAIRED_RUNS = """
    SELECT ra.key AS key, COUNT(*) AS scored_a, COUNT(rb.score) AS n,
           SUM(CASE WHEN rb.score IS NOT NULL THEN ra.score END) AS sum_a,
           SUM(rb.score) AS sum_b, SUM(rb.score - ra.score) AS sum_d,
           SUM((rb.score - ra.score) * (rb.score - ra.score)) AS sum_dd,
           COALESCE(MIN(CASE WHEN rb.score IS NOT NULL THEN (ra.score = 0.0 OR ra.score = 1.0)
                        AND (rb.score = 0.0 OR rb.score = 1.0) END), 0) AS binary,
           TOTAL(ra.score = 1 AND rb.score = 1) AS both_pass,
           TOTAL(ra.score = 1 AND rb.score = 0) AS only_a,
           TOTAL(ra.score = 0 AND rb.score = 1) AS only_b,
           TOTAL(ra.score = 0 AND rb.score = 0) AS neither,
           0 AS repeated
    FROM runs ua
    JOIN results ra ON ra.run_id = ua.id AND ra.error IS NULL AND ra.score IS NOT NULL
    LEFT JOIN runs ub ON ub.experiment_id = :b AND ub.example_id = ua.example_id
         AND ub.repetition = ua.repetition
    LEFT JOIN results rb ON rb.run_id = ub.id AND rb.key = ra.key AND rb.error IS NULL
         AND rb.score IS NOT NULL
    WHERE ua.experiment_id = :a
    GROUP BY ra.key
"""

_SCORED = """
    SELECT key, COUNT(score) AS scored FROM results WHERE experiment_id = ? GROUP BY key
"""

_PAIRED = f"""
    WITH per AS ({_PER_EXAMPLE}),
    paired AS (SELECT *, CASE WHEN ka > 0 AND kb > 0 THEN sb - sa END AS d FROM per)
    SELECT key, COUNT(sa) AS scored_a, COUNT(sb) AS scored_b, COUNT(d) AS n,
           SUM(CASE WHEN d IS NOT NULL THEN sa END) AS sum_a,
           SUM(CASE WHEN d IS NOT NULL THEN sb END) AS sum_b,
           SUM(d) AS sum_d, SUM(d * d) AS sum_dd,
           COALESCE(MIN(CASE WHEN d IS NOT NULL THEN bin AND ka = 1 AND kb = 1 END), 0) AS binary,
           TOTAL(d IS NOT NULL AND sa = 1 AND sb = 1) AS both_pass,
           TOTAL(d IS NOT NULL AND sa = 1 AND sb = 0) AS only_a,
           TOTAL(d IS NOT NULL AND sa = 0 AND sb = 1) AS only_b,
           TOTAL(d IS NOT NULL AND sa = 0 AND sb = 0) AS neither,
           MAX(ka) > 1 OR MAX(kb) > 1 AS repeated
    FROM paired GROUP BY key
"""

_CLUSTERED = f"""
    WITH per AS ({_PER_EXAMPLE}),
    clusters AS (
        SELECT id AS ex, json_extract(metadata, :path) AS cluster
        FROM examples WHERE dataset_id = :dataset GROUP BY id
    )
    SELECT p.key AS key, COUNT(*) AS n, SUM(p.sb - p.sa) AS sum_d
    FROM per p LEFT JOIN clusters c ON c.ex = p.ex
    WHERE p.ka > 0 AND p.kb > 0
    GROUP BY p.key, COALESCE(c.cluster, 'example:' || p.ex)
"""

# Per metric of one experiment: its keys in first-seen order and, among results without
# a score (a small subset, found in the metric index), errors and skipped ones.
_KEYS = "SELECT key FROM results WHERE experiment_id = ? GROUP BY key ORDER BY MIN(pk)"
_UNSCORED = """
    SELECT r.key AS key, SUM(r.error IS NOT NULL) AS errors,
           SUM(r.error IS NULL AND u.error IS NOT NULL) AS skipped
    FROM results r JOIN runs u ON u.id = r.run_id
    WHERE r.experiment_id = ? AND r.score IS NULL
    GROUP BY r.key
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


def _has_repetitions(conn: sqlite3.Connection, experiment_id: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM runs WHERE experiment_id = ? AND repetition > 0 LIMIT 1", (experiment_id,)
    ).fetchone()
    return row is not None


def paired_sums(conn: sqlite3.Connection, a: str, b: str) -> list[PairedSums]:
    """Per metric, sums over the examples scored on both sides (repetitions averaged)."""
    if _has_repetitions(conn, a) or _has_repetitions(conn, b):
        return _sums(conn.execute(_PAIRED, {"a": a, "b": b}).fetchall(), None)
    scored_b = {row["key"]: int(row["scored"]) for row in conn.execute(_SCORED, (b,))}
    return _sums(conn.execute(_PAIRED_RUNS, {"a": a, "b": b}).fetchall(), scored_b)


def _sums(rows: list[Any], scored_b: dict[str, int] | None) -> list[PairedSums]:
    return [
        PairedSums(
            key=row["key"],
            scored_a=row["scored_a"],
            scored_b=row["scored_b"] if scored_b is None else scored_b.get(row["key"], 0),
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
    params = {"a": a, "b": b, "path": path, "dataset": dataset_id}
    for row in conn.execute(_CLUSTERED, params):
        sums.setdefault(row["key"], []).append((int(row["n"]), float(row["sum_d"])))
    return sums


def side_facts(conn: sqlite3.Connection, experiment_id: str) -> SideFacts:
    rows, failures = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(error IS NOT NULL), 0) FROM runs WHERE experiment_id = ?",
        (experiment_id,),
    ).fetchone()
    unscored = {row["key"]: row for row in conn.execute(_UNSCORED, (experiment_id,))}
    outcomes = {
        row["key"]: Outcomes(
            int(unscored[row["key"]]["errors"]) if row["key"] in unscored else 0,
            int(unscored[row["key"]]["skipped"]) if row["key"] in unscored else 0,
        )
        for row in conn.execute(_KEYS, (experiment_id,))
    }
    return SideFacts(
        int(rows), int(failures), outcomes, {key: _metric_info(conn, experiment_id, key) for key in outcomes}
    )


# The metric metadata of a metric's first result that has any: an evaluator declares it on
# every result it returns, so a look at the first few (bounded) speaks for all.
METRIC_INFO_SQL = (
    "SELECT evaluator_info FROM (SELECT evaluator_info FROM results WHERE experiment_id = ? "
    "AND key = ? LIMIT 100) AS first_results WHERE evaluator_info IS NOT NULL LIMIT 1"
)


def decode_metric_info(row: Any) -> dict[str, Any]:
    info: dict[str, Any] | None = loads(row[0]) if row is not None else None
    return info if isinstance(info, dict) else {}


def _metric_info(conn: sqlite3.Connection, experiment_id: str, key: str) -> dict[str, Any]:
    return decode_metric_info(conn.execute(METRIC_INFO_SQL, (experiment_id, key)).fetchone())
