"""A store set back to an earlier schema version, as a store written by an older assay
left it: the tables and indexes the later migrations create are dropped (newest first)
and the version recorded is the earlier one. Shared by the migration tests, so a new
migration needs no edit of theirs (loaded by tests/conftest.py as
``assay_tests_schema_history``)."""

from __future__ import annotations

import re
from typing import Any

from assay.store._schema import MIGRATIONS

__all__ = ["set_back"]

_CREATED = re.compile(r"CREATE\s+(?:UNIQUE\s+)?(TABLE|INDEX)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.IGNORECASE)


def set_back(conn: Any, version: int, mark: str = "?") -> None:
    """Through ``conn`` (sqlite3 or psycopg; ``mark``: its parameter mark), the schema as
    it was at ``version``. What else a later migration did (a trigger, a column's values)
    is left: a migration must take its own work again anyway."""
    created = [found for script in MIGRATIONS[version:] for found in _CREATED.findall(script)]
    for kind, name in reversed(created):
        conn.execute(f"DROP {kind} IF EXISTS {name}")
    conn.execute(f"UPDATE meta SET value = {mark} WHERE key = 'schema_version'", (str(version),))
