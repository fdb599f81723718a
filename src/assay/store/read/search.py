"""The rows a search keeps: those whose stored inputs or outputs JSON text holds the query.

The condition is always the substring ``LIKE`` on the runs (its wildcards taken
literally), with SQLite's rule on both backends: ASCII letters match either case, no
other character is folded (PostgreSQL's ``LIKE`` folds nothing, so there both sides are
put in ASCII lower case first); where the experiment has a true text index (``assay.store.text_index``) it is
narrowed first to the index's candidates, so the same rows match, in the same order,
without reading every row. A finished experiment searched without one gets one built in
the background when the database allows it (``ReadOnlyDatabase.builds_text_indexes``, as
the UI server sets it); meanwhile, and for queries too short for trigrams, the scan serves.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from assay.store import text_index
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.sql import like_pattern

__all__ = ["Search", "search_clause"]

_SCAN = "(u.inputs LIKE ? ESCAPE '\\' OR u.outputs LIKE ? ESCAPE '\\')"
_UPPER, _LOWER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"
_ASCII_LOWER = str.maketrans(_UPPER, _LOWER)
_SCAN_FOLDED = (
    f"(translate(u.inputs, '{_UPPER}', '{_LOWER}') LIKE ? ESCAPE '\\' "
    f"OR translate(u.outputs, '{_UPPER}', '{_LOWER}') LIKE ? ESCAPE '\\')"
)
_lock = threading.Lock()


# Above this many candidates, SQLite reads the rows in the page's order instead (a walk
# that stops after a page, with the count kept): sorting every candidate would cost more.
_FEW = 20000


@dataclass(frozen=True)
class Search:
    condition: str  # on a run ``u``
    params: list[Any]
    drives: bool  # whether the rows are best read from the candidates (the index leads)


def search_clause(db: ReadOnlyDatabase, experiment_id: str, query: str) -> Search:
    """The SQL condition on a run ``u`` that keeps the rows matching ``query``."""
    pattern = like_pattern(query)
    if db.is_postgres:
        pattern = pattern.translate(_ASCII_LOWER)
    scan = Search(_SCAN_FOLDED if db.is_postgres else _SCAN, [pattern, pattern], drives=False)
    if len(query) < text_index.MIN_CHARS:
        return scan
    index = text_index.built(db.conn, experiment_id)
    narrowed = text_index.candidates(index, query) if index is not None else None
    if index is None:
        _build_in_background(db, experiment_id)
    if index is None or narrowed is None:
        return scan
    condition, candidate_params = narrowed
    if index.kind == text_index.FTS5 and not _few(db, index, candidate_params):
        return scan
    # PostgreSQL's planner weighs the candidates itself, by its statistics.
    return Search(
        f"{condition} AND {scan.condition}", [*candidate_params, *scan.params], index.kind == text_index.FTS5
    )


def _few(db: ReadOnlyDatabase, index: text_index.TextIndex, params: list[Any]) -> bool:
    """Whether the index finds at most ``_FEW`` candidates (counted no further)."""
    row = db.query_one(
        f'SELECT COUNT(*) FROM (SELECT rowid FROM "{index.name}" WHERE "{index.name}" MATCH ? LIMIT ?)',
        [*params, _FEW + 1],
    )
    return row is not None and int(row[0]) <= _FEW


def _build_in_background(db: ReadOnlyDatabase, experiment_id: str) -> None:
    """Start one build per experiment at a time, once its rows are final."""
    if not db.builds_text_indexes or _running(db, experiment_id):
        return
    with _lock:
        if experiment_id in db.text_builds:
            return
        db.text_builds.add(experiment_id)

    def run() -> None:
        try:
            text_index.build(db.store, experiment_id)
        except Exception:  # a closed or busy store: the scan keeps serving, a later search retries
            pass
        finally:
            with _lock:
                db.text_builds.discard(experiment_id)

    threading.Thread(target=run, name=f"assay-text-index-{experiment_id}", daemon=True).start()


def _running(db: ReadOnlyDatabase, experiment_id: str) -> bool:
    """Whether the experiment's rows may still change (an index would not last)."""
    row = db.query_one("SELECT status FROM experiments WHERE id = ?", (experiment_id,))
    return row is None or row[0] == "running"
