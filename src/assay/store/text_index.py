"""A text index of one finished experiment's runs (inputs and outputs), for the UI's search.

A search matches rows whose stored inputs or outputs JSON text holds the query as a
substring (``LIKE '%q%'``). Without an index that reads every row: seconds at a million
rows. The index only narrows the rows to check: a search keeps its ``LIKE`` on the runs,
so the rows found, and their order, are the scan's exactly; the index need only hold every
row that could match (a superset).

- SQLite: a contentless FTS5 table with the ``trigram`` tokenizer (case folded, no
  positions: ``detail=none``); a query asks for rows holding each of its trigrams, which
  every substring match does. A query of fewer than three characters has no trigram: the
  scan serves it.
- PostgreSQL: a copy of the runs' text with a ``pg_trgm`` GIN index, queried with the same
  ``LIKE`` (the ``pg_trgm`` extension is created on the first build; without it, no index).

Nothing is maintained on a row write. Each index is named by a mark in ``text_indexes``
that exists only while it is true: every write of the experiment's runs deletes the mark
in its own transaction (``invalidate``), and a build (``build``) writes a pending mark,
fills a new table in short transactions (writers wait a moment at most) and marks it
built only if the pending mark survived. Tables no mark names are dropped by the next build.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from assay.schemas import utcnow

__all__ = ["MIN_CHARS", "TextIndex", "build", "built", "candidates", "invalidate"]

MIN_CHARS = 3
"""The shortest query a trigram index serves."""

FTS5, PG_TRGM = "fts5", "pg_trgm"
_NAME = re.compile(r"run_text_[0-9a-f]{32}")
_CHUNK = 20000
_MAX_TRIGRAMS = 12  # more narrow little further and cost a doclist each


@dataclass(frozen=True)
class TextIndex:
    name: str  # always matches ``_NAME``: safe to splice into SQL
    kind: str


def invalidate(conn: Any, experiment_ids: Iterable[str]) -> None:
    """Drop the marks of experiments whose runs are being written (inside the writing
    transaction): their indexes are no longer read."""
    for experiment_id in set(experiment_ids):
        conn.execute("DELETE FROM text_indexes WHERE experiment_id = ?", (experiment_id,))


def drop_of(conn: Any, experiment_id: str) -> None:
    """Drop the experiment's index table and mark (inside the transaction deleting the
    experiment: its table would otherwise stay until the next build of any index)."""
    for (name,) in conn.execute(
        "SELECT name FROM text_indexes WHERE experiment_id = ?", (experiment_id,)
    ).fetchall():
        if _NAME.fullmatch(name):
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
    invalidate(conn, [experiment_id])


def built(conn: Any, experiment_id: str) -> TextIndex | None:
    """The experiment's index, if one is built and true."""
    row = conn.execute(
        "SELECT name, kind FROM text_indexes WHERE experiment_id = ? AND built_at IS NOT NULL",
        (experiment_id,),
    ).fetchone()
    if row is None or not _NAME.fullmatch(row[0]):
        return None
    return TextIndex(row[0], row[1])


def candidates(index: TextIndex, query: str) -> tuple[str, list[Any]] | None:
    """A condition on a run ``u`` that every run whose inputs or outputs hold ``query``
    meets, or None when the index cannot serve the query (too short, or unbindable)."""
    if len(query) < MIN_CHARS or "\0" in query or not _encodable(query):
        return None
    if index.kind == FTS5:
        grams = list(dict.fromkeys(query[at : at + 3] for at in range(len(query) - 2)))
        if len(grams) > _MAX_TRIGRAMS:  # spread over the query, first and last kept
            step = (len(grams) - 1) / (_MAX_TRIGRAMS - 1)
            grams = [grams[round(i * step)] for i in range(_MAX_TRIGRAMS)]
        match = " ".join('"' + gram.replace('"', '""') + '"' for gram in grams)
        return f'u.rowid IN (SELECT rowid FROM "{index.name}" WHERE "{index.name}" MATCH ?)', [match]
    pattern = _like_pattern(query)
    # ILIKE folds at least what the search's ASCII folding does: a superset, and served
    # by the trigram index as LIKE is
    return (
        f'u.id IN (SELECT t.run_id FROM "{index.name}" t '
        "WHERE t.inputs ILIKE ? ESCAPE '\\' OR t.outputs ILIKE ? ESCAPE '\\')",
        [pattern, pattern],
    )


def build(store: Any, experiment_id: str, *, chunk: int = _CHUNK) -> TextIndex | None:
    """Build and mark the experiment's index; None when a write of its runs came during
    the build (the build is then dropped) or the database has no trigram index."""
    kind = PG_TRGM if _is_postgres(store) else FTS5
    if kind == PG_TRGM and not _has_pg_trgm(store):
        return None
    index = TextIndex(f"run_text_{uuid.uuid4().hex}", kind)
    with store.transaction() as conn:
        _drop_unmarked(conn, kind, keep=experiment_id)
        invalidate(conn, [experiment_id])
        conn.execute(
            "INSERT INTO text_indexes (experiment_id, name, kind, built_at) VALUES (?, ?, ?, NULL)",
            (experiment_id, index.name, kind),
        )
        conn.execute(_CREATE[kind].format(name=index.name))
    after = (-1, -1)
    while True:
        with store.transaction() as conn:
            if not _pending(conn, experiment_id, index):
                _drop(conn, index)
                return None
            rows = conn.execute(_READ[kind], (experiment_id, *after, chunk)).fetchall()
            conn.executemany(_INSERT[kind].format(name=index.name), [tuple(row[:3]) for row in rows])
        if len(rows) < chunk:
            break
        after = (rows[-1][3], rows[-1][4])
    if kind == PG_TRGM:  # built once over the filled table, not row by row
        with store.transaction() as conn:
            conn.execute(
                f'CREATE INDEX "{index.name}_trgm" ON "{index.name}" '
                "USING gin (inputs gin_trgm_ops, outputs gin_trgm_ops)"
            )
    with store.transaction() as conn:
        marked = conn.execute(
            "UPDATE text_indexes SET built_at = ? WHERE experiment_id = ? AND name = ? AND built_at IS NULL",
            (utcnow().isoformat(), experiment_id, index.name),
        ).rowcount
        if marked != 1:
            _drop(conn, index)
            return None
    return index


_CREATE = {
    FTS5: (
        "CREATE VIRTUAL TABLE \"{name}\" USING fts5(inputs, outputs, content='', "
        "detail=none, columnsize=0, tokenize='trigram')"
    ),
    PG_TRGM: 'CREATE TABLE "{name}" (run_id TEXT NOT NULL, inputs TEXT, outputs TEXT)',
}
_AFTER = "experiment_id = ? AND (position, repetition) > (?, ?) ORDER BY position, repetition LIMIT ?"
_READ = {
    FTS5: f"SELECT rowid, inputs, outputs, position, repetition FROM runs WHERE {_AFTER}",
    PG_TRGM: f"SELECT id, inputs, outputs, position, repetition FROM runs WHERE {_AFTER}",
}
_INSERT = {
    FTS5: 'INSERT INTO "{name}" (rowid, inputs, outputs) VALUES (?, ?, ?)',
    PG_TRGM: 'INSERT INTO "{name}" (run_id, inputs, outputs) VALUES (?, ?, ?)',
}


def _pending(conn: Any, experiment_id: str, index: TextIndex) -> bool:
    row = conn.execute(
        "SELECT 1 FROM text_indexes WHERE experiment_id = ? AND name = ? AND built_at IS NULL",
        (experiment_id, index.name),
    ).fetchone()
    return row is not None


def _drop(conn: Any, index: TextIndex) -> None:
    conn.execute(f'DROP TABLE IF EXISTS "{index.name}"')


def _drop_unmarked(conn: Any, kind: str, *, keep: str) -> None:
    """Drop the index tables no mark names (invalidated, or left by a dead build), and
    the one of ``keep``, about to be replaced."""
    marked = {
        row[0]
        for row in conn.execute("SELECT name FROM text_indexes WHERE experiment_id <> ?", (keep,)).fetchall()
    }
    if kind == FTS5:
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    else:
        tables = conn.execute(
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
    for (name,) in tables:
        if _NAME.fullmatch(name) and name not in marked:
            _drop(conn, TextIndex(name, kind))


def _has_pg_trgm(store: Any) -> bool:
    """Whether ``pg_trgm`` is (or can be made) available in the store's database."""
    try:
        with store.transaction() as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except Exception:  # not installed, or not ours to create: the scan serves searches
        return False
    return True


def _is_postgres(store: Any) -> bool:
    # By its connection: the store classes import this module, so it imports none of them.
    return not isinstance(store.conn, sqlite3.Connection)


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate: the scan answers (or refuses) as before
        return False
    return True


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
