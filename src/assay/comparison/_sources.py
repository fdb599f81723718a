"""Where a comparison's paired sums come from: stored metric columns, or SQL.

Columns answer for two finished experiments (built when an experiment completes, or here
on first use for older stores); a running experiment, a clustered comparison, or columns
that cannot be paired (ids stored in different forms) take the SQL path.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, Protocol

from assay.store import _columns as stored
from assay.store.base import Store
from assay.store.read import pairing as query

if TYPE_CHECKING:
    from assay.comparison._columnar import ColumnPair, Side


class PairingSource(Protocol):
    def sums(self, keys: list[str], signs: dict[str, float]) -> dict[str, query.PairedSums]: ...

    def differences(self, key: str) -> list[float]: ...


class SQLSource:
    """The SQL over the covering pair index (``store.read.pairing``)."""

    def __init__(self, conn: sqlite3.Connection, a: str, b: str) -> None:
        self._conn, self._a, self._b = conn, a, b

    def sums(self, keys: list[str], signs: dict[str, float]) -> dict[str, query.PairedSums]:
        return {s.key: s for s in query.paired_sums(self._conn, self._a, self._b, keys, signs)}

    def differences(self, key: str) -> list[float]:
        return query.paired_differences(self._conn, self._a, self._b, key)


class ColumnSource:
    """numpy over both experiments' stored columns, one metric in memory at a time."""

    def __init__(self, pair: ColumnPair, fallback: SQLSource) -> None:
        self._pair, self._fallback = pair, fallback
        self._last: tuple[str, tuple[Side, Side] | None] | None = None

    def _sides(self, key: str) -> tuple[Side, Side] | None:
        if self._last is None or self._last[0] != key:
            self._last = (key, self._pair.sides(key))
        return self._last[1]

    def sums(self, keys: list[str], signs: dict[str, float]) -> dict[str, query.PairedSums]:
        from assay.comparison import _columnar

        found = {}
        for key in keys:
            sides = self._sides(key)
            if sides is None:
                found.update(self._fallback.sums([key], signs))
                continue
            found[key] = _columnar.paired_sums(
                key, *sides, repeated=self._pair.repeated, sign=signs.get(key, 1.0)
            )
        return found

    def differences(self, key: str) -> list[float]:
        from assay.comparison import _columnar

        sides = self._sides(key)
        return _columnar.differences(*sides) if sides is not None else self._fallback.differences(key)


def source_for(conn: sqlite3.Connection, records: list[Any], cluster_by: str | None) -> PairingSource:
    """Stored columns when both experiments have them (finished, unclustered), else SQL."""
    first, second = (str(r.id) for r in records)
    sql = SQLSource(conn, first, second)
    if cluster_by is None and all(r.status != "running" for r in records):
        from assay.comparison import _columnar

        pair = _columnar.load_pair(conn, first, second)
        if pair is not None:
            return ColumnSource(pair, sql)
    return sql


def ensure_columns(store: Store, record: Any) -> None:
    """Build a finished experiment's columns if it has none (a store from before them, or
    results rewritten since). A store that refuses the write keeps the SQL path."""
    if record.status == "running" or getattr(store, "transaction", None) is None:
        return
    experiment_id = str(record.id)
    if stored.load(store.conn, experiment_id, keys=[]) is not None:  # type: ignore[attr-defined]
        return
    try:
        stored.refresh(store, experiment_id)
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):
            raise
