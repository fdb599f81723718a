"""Database backends of the SQL evaluator: the interface in ``base``, one module per engine,
and the factory that picks one from a user's ``database``."""

from __future__ import annotations

import os
from pathlib import Path

from assay.evaluators.sql.backends import sqlite
from assay.evaluators.sql.backends.base import Database, DatabaseSpec, ExecutionLimits

__all__ = ["open_database"]


def open_database(
    spec: DatabaseSpec, limits: ExecutionLimits, *, allow_privileged_role: bool = False
) -> Database:
    """The backend for ``spec``: None (fixture per example), a SQLite path, or a URL.

    ``allow_privileged_role`` lets PostgreSQL queries run as a role that may do more
    than read (a superuser...); without it such a role is refused at connect time.
    """
    if spec is None:
        return sqlite.SQLiteFixtures(limits)
    if isinstance(spec, os.PathLike):
        return sqlite.SQLiteFile(Path(os.fspath(spec)), limits)
    if not isinstance(spec, str):
        raise TypeError(
            f"database must be a SQLite file path, a database URL or None, got {type(spec).__name__}"
        )
    if "://" not in spec:
        return sqlite.SQLiteFile(Path(spec), limits)
    scheme = spec.split("://", 1)[0].lower()
    if scheme == "sqlite":
        return sqlite.SQLiteFile(_sqlite_url_path(spec), limits)
    if scheme.split("+", 1)[0] in ("postgresql", "postgres"):
        from assay.evaluators.sql.backends import postgres

        return postgres.PostgresDatabase(spec, limits, allow_privileged_role=allow_privileged_role)
    raise ValueError(
        f"unsupported database URL scheme {scheme!r}: SQLExecutionEvaluator runs SQLite files "
        "(a path or sqlite:///path) and PostgreSQL (postgresql://...) read-only"
    )


def _sqlite_url_path(url: str) -> Path:
    """``sqlite:///relative.db`` and ``sqlite:////absolute.db``, as SQLAlchemy spells them."""
    rest = url.split("://", 1)[1]
    path = rest.removeprefix("/")
    path = path.split("?", 1)[0]
    if path in ("", ":memory:"):
        raise ValueError(
            f"{url!r} is an empty in-memory database; give a SQLite file, or database=None "
            "with example.inputs['schema_sql'] to build one per example"
        )
    return Path(path)
