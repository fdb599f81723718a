"""The SQL behind a paired comparison (the store's read model): per metric, sums over paired examples.

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

from assay.store.base import Store
from assay.store.codec import loads

# One row per (metric, example) over both experiments: the mean of each side's scored
# repetitions. One pass over the results of both, grouped once (no join of two halves).
__all__ = [
    "EPSILON",
    "METRIC_INFO_SQL",
    "Outcomes",
    "PairedSums",
    "SideFacts",
    "cluster_sums",
    "decode_metric_info",
    "paired_differences",
    "paired_sums",
    "reading",
    "scored_with_outputs",
    "side_facts",
]

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

# Per metric, with one repetition per example: A's scores in example order from the
# covering pair index, each paired with B's score by a lookup in the same index (no runs,
# no table rows, no sort). Plain SQL: PostgreSQL plans the same as a merge join. In the
# same pass, the rows where B did worse or better than A (the per-row changes: a lower
# score, or an error where A had none; ``:sign`` is -1 for lower-is-better metrics).
# Only results without a score are looked up in the table, to tell errors from the rest.
EPSILON = 1e-9
_ERRORED = "(SELECT CASE WHEN e.error IS NULL THEN 0 ELSE 1 END FROM results e WHERE e.pk = {alias}.pk)"
_PAIRED_ROWS = f"""
    SELECT COUNT(sa) AS scored_a,
           SUM(CASE WHEN sa IS NOT NULL AND sb IS NOT NULL THEN 1 ELSE 0 END) AS n,
           SUM(CASE WHEN sb IS NOT NULL THEN sa END) AS sum_a,
           SUM(CASE WHEN sa IS NOT NULL THEN sb END) AS sum_b,
           SUM(sb - sa) AS sum_d, SUM((sb - sa) * (sb - sa)) AS sum_dd,
           MIN(CASE WHEN sa IS NULL OR sb IS NULL THEN NULL
                    WHEN sa IN (0.0, 1.0) AND sb IN (0.0, 1.0) THEN 1 ELSE 0 END) AS is_binary,
           SUM(CASE WHEN sa = 1 AND sb = 1 THEN 1 ELSE 0 END) AS both_pass,
           SUM(CASE WHEN sa = 1 AND sb = 0 THEN 1 ELSE 0 END) AS only_a,
           SUM(CASE WHEN sa = 0 AND sb = 1 THEN 1 ELSE 0 END) AS only_b,
           SUM(CASE WHEN sa = 0 AND sb = 0 THEN 1 ELSE 0 END) AS neither,
           0 AS repeated,
           SUM(CASE WHEN (eb = 1 AND ea = 0) OR :sign * (sb - sa) < -{EPSILON} THEN 1 ELSE 0 END)
               AS rows_worse,
           SUM(CASE WHEN (ea = 1 AND eb = 0 AND sb IS NOT NULL) OR :sign * (sb - sa) > {EPSILON}
               THEN 1 ELSE 0 END) AS rows_better
    FROM (SELECT ra.score AS sa, rb.score AS sb,
                 CASE WHEN ra.score IS NULL THEN {_ERRORED.format(alias="ra")} ELSE 0 END AS ea,
                 CASE WHEN rb.pk IS NOT NULL AND rb.score IS NULL THEN {_ERRORED.format(alias="rb")}
                      ELSE 0 END AS eb
          FROM results ra
          LEFT JOIN results rb ON rb.experiment_id = :b AND rb.key = :key
               AND rb.example_id = ra.example_id AND rb.repetition = ra.repetition
          WHERE ra.experiment_id = :a AND ra.key = :key) p
"""

# Per metric, with repetitions: each side's scores averaged per example. A's groups come
# in index order; B's mean and count per example are index range lookups.
_PER_EXAMPLE_PAIRS = """
    SELECT pa.sa AS sa, pa.ka AS ka,
           (SELECT AVG(rb.score) FROM results rb WHERE rb.experiment_id = :b AND rb.key = :key
                AND rb.example_id = pa.ex AND rb.score IS NOT NULL) AS sb,
           (SELECT COUNT(rb.score) FROM results rb WHERE rb.experiment_id = :b AND rb.key = :key
                AND rb.example_id = pa.ex AND rb.score IS NOT NULL) AS kb
    FROM (SELECT example_id AS ex, AVG(score) AS sa, COUNT(*) AS ka FROM results
          WHERE experiment_id = :a AND key = :key AND score IS NOT NULL
          GROUP BY example_id) pa
"""

_PAIRED_EXAMPLES = f"""
    SELECT COUNT(*) AS scored_a, COUNT(sb) AS n,
           SUM(CASE WHEN sb IS NOT NULL THEN sa END) AS sum_a,
           SUM(sb) AS sum_b, SUM(sb - sa) AS sum_d, SUM((sb - sa) * (sb - sa)) AS sum_dd,
           MIN(CASE WHEN sb IS NULL THEN NULL
                    WHEN ka = 1 AND kb = 1 AND sa IN (0.0, 1.0) AND sb IN (0.0, 1.0) THEN 1
                    ELSE 0 END) AS is_binary,
           SUM(CASE WHEN sa = 1 AND sb = 1 AND kb > 0 THEN 1 ELSE 0 END) AS both_pass,
           SUM(CASE WHEN sa = 1 AND sb = 0 AND kb > 0 THEN 1 ELSE 0 END) AS only_a,
           SUM(CASE WHEN sa = 0 AND sb = 1 AND kb > 0 THEN 1 ELSE 0 END) AS only_b,
           SUM(CASE WHEN sa = 0 AND sb = 0 AND kb > 0 THEN 1 ELSE 0 END) AS neither,
           CASE WHEN MAX(ka) > 1 OR MAX(kb) > 1 THEN 1 ELSE 0 END AS repeated
    FROM ({_PER_EXAMPLE_PAIRS}) p
"""

# The per-example differences B - A themselves, for the tests and intervals that need
# every value (Wilcoxon signed-rank, BCa bootstrap).
_DIFFERENCES = f"SELECT sb - sa FROM ({_PER_EXAMPLE_PAIRS}) p WHERE sb IS NOT NULL"

# Examples of B scored on a metric (B's side of "rows only in one side").
_SCORED_ROWS = "SELECT COUNT(score) FROM results WHERE experiment_id = :b AND key = :key"
_SCORED_EXAMPLES = """
    SELECT COUNT(DISTINCT example_id) FROM results
    WHERE experiment_id = :b AND key = :key AND score IS NOT NULL
"""

_CLUSTERED = f"""
    WITH per AS ({_PER_EXAMPLE}),
    clusters AS (
        SELECT id AS ex, MIN(json_extract(metadata, :path)) AS cluster
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
    rows_worse: int | None = None  # rows of B worse than A's (without repetitions only)
    rows_better: int | None = None


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


def paired_sums(
    conn: sqlite3.Connection, a: str, b: str, keys: list[str], signs: dict[str, float] | None = None
) -> list[PairedSums]:
    """Per metric, sums over the examples scored on both sides (repetitions averaged);
    without repetitions also the per-row changes, read with ``signs`` (-1.0: lower is
    better)."""
    repeated = _has_repetitions(conn, a) or _has_repetitions(conn, b)
    paired, scored = (_PAIRED_EXAMPLES, _SCORED_EXAMPLES) if repeated else (_PAIRED_ROWS, _SCORED_ROWS)
    sums = []
    for key in keys:
        params = {"a": a, "b": b, "key": key, "sign": (signs or {}).get(key, 1.0)}
        row = conn.execute(paired, params).fetchone()
        scored_b = conn.execute(scored, params).fetchone()[0]
        sums.append(_sums(key, row, int(scored_b)))
    return sums


def paired_differences(conn: sqlite3.Connection, a: str, b: str, key: str) -> list[float]:
    """The per-example differences B - A on one metric (repetitions averaged first)."""
    return [row[0] for row in conn.execute(_DIFFERENCES, {"a": a, "b": b, "key": key})]


def _sums(key: str, row: Any, scored_b: int) -> PairedSums:
    return PairedSums(
        key=key,
        scored_a=row["scored_a"],
        scored_b=scored_b,
        n=row["n"],
        sum_a=row["sum_a"] or 0.0,
        sum_b=row["sum_b"] or 0.0,
        sum_d=row["sum_d"] or 0.0,
        sum_dd=row["sum_dd"] or 0.0,
        binary=bool(row["is_binary"]) and row["n"] > 0,
        both_pass=int(row["both_pass"] or 0),
        only_a=int(row["only_a"] or 0),
        only_b=int(row["only_b"] or 0),
        neither=int(row["neither"] or 0),
        repeated=bool(row["repeated"]),
        rows_worse=int(row["rows_worse"] or 0) if "rows_worse" in row.keys() else None,
        rows_better=int(row["rows_better"] or 0) if "rows_better" in row.keys() else None,
    )


def cluster_sums(
    conn: sqlite3.Connection, a: str, b: str, dataset_id: str, metadata_key: str
) -> dict[str, list[tuple[int, float]]]:
    path = '$."' + metadata_key.replace('"', '\\"') + '"'
    sums: dict[str, list[tuple[int, float]]] = {}
    params = {"a": a, "b": b, "path": path, "dataset": dataset_id}
    for row in conn.execute(_CLUSTERED, params):
        sums.setdefault(row["key"], []).append((int(row["n"]), float(row["sum_d"])))
    return sums


# A finished experiment's counts as the runner stored them (no scan of its rows).
_STORED_COUNTS = "SELECT row_count, run_errors FROM experiment_stats WHERE experiment_id = ? AND final = 1"
_STORED_OUTCOMES = "SELECT key, errors, skipped FROM metric_stats WHERE experiment_id = ? ORDER BY ordinal"


def side_facts(conn: sqlite3.Connection, experiment_id: str) -> SideFacts:
    stored = conn.execute(_STORED_COUNTS, (experiment_id,)).fetchone()
    if stored is not None:
        outcomes = {
            row[0]: Outcomes(int(row[1]), int(row[2]))
            for row in conn.execute(_STORED_OUTCOMES, (experiment_id,))
        }
        info = {key: _metric_info(conn, experiment_id, key) for key in outcomes}
        return SideFacts(int(stored[0]), int(stored[1]), outcomes, info)
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


# A metric's scored results with their run's outputs; metadata tells a judge's results.
_SCORED_WITH_OUTPUTS = """
    SELECT r.example_id, r.score, r.metadata, u.outputs
    FROM results r JOIN runs u ON u.id = r.run_id
    WHERE r.experiment_id = ? AND r.key = ? AND r.error IS NULL AND r.score IS NOT NULL
"""


def scored_with_outputs(conn: sqlite3.Connection, experiment_id: str, key: str) -> Iterator[Any]:
    """(example id, score, metadata JSON, outputs JSON) of each scored result of ``key``
    (the comparison's verbosity check)."""
    yield from conn.execute(_SCORED_WITH_OUTPUTS, (experiment_id, key))
