"""Fixtures for the SQL evaluator tests: the shop database in SQLite and in a real PostgreSQL.

PostgreSQL is the session's server from the root conftest (``tests/_postgres.py``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest


def _load_local(name: str) -> ModuleType:
    """A helper module next to this file (tests are not a package under importlib mode)."""
    qualified = f"assay_tests_sql_{name}"
    if qualified not in sys.modules:
        spec = importlib.util.spec_from_file_location(qualified, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module
        spec.loader.exec_module(module)
    return sys.modules[qualified]


sample_db = _load_local("sample_db")
pg = sys.modules["assay_tests_postgres"]  # loaded by the root conftest


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def shop_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop database as a SQLite file (shared: tests must never change it)."""
    return sample_db.build_sqlite(tmp_path_factory.mktemp("shop") / "shop.db")


@pytest.fixture(scope="session")
def shop_sql() -> tuple[str, str]:
    """(schema, seed) SQL of the shop database, for per-example fixtures."""
    return sample_db.SCHEMA, sample_db.seed_sql()


# --- PostgreSQL (the server comes from the root conftest) ----------------------------------


@pytest.fixture(scope="session")
def shop_postgres_admin(postgres_server_url: str) -> Iterator[str]:
    """URL of a fresh database holding the shop data, as the server's superuser (dropped at the end)."""
    import psycopg
    from sqlalchemy import make_url

    url = pg.create_database(postgres_server_url, prefix="assay_sql_test")
    with psycopg.connect(_libpq_url(make_url(url)), autocommit=True) as connection:
        connection.execute(sample_db.SCHEMA + sample_db.seed_sql())
    try:
        yield url
    finally:
        pg.drop_database(postgres_server_url, url)


DOCS_SQL = Path(__file__).parents[3] / "docs" / "sql.md"


def documented_role_sql() -> str:
    """The role-creation SQL of docs/sql.md, as a user would copy it."""
    text = DOCS_SQL.read_text()
    section = text[text.index("#### The role to create") :]
    return section.split("```sql\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="session")
def shop_postgres(shop_postgres_admin: str, postgres_server_url: str) -> Iterator[str]:
    """URL of the shop database for a role created with docs/sql.md's SQL: read-only, unprivileged."""
    import psycopg
    from sqlalchemy import make_url

    admin_url = make_url(shop_postgres_admin)
    role = f"sql_eval_{uuid.uuid4().hex[:8]}"
    script = documented_role_sql().replace("sql_eval", role).replace("shop", str(admin_url.database))
    with psycopg.connect(_libpq_url(admin_url), autocommit=True) as admin:
        admin.execute(script)
    try:
        yield admin_url.set(username=role, password="change-me").render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq_url(admin_url), autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
            )
            admin.execute(f'REASSIGN OWNED BY "{role}" TO CURRENT_USER; DROP OWNED BY "{role}"')
        with psycopg.connect(_libpq_url(make_url(postgres_server_url)), autocommit=True) as admin:
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')


def _libpq_url(url: object) -> str:
    """A SQLAlchemy URL as libpq understands it (no ``+driver``)."""
    return str(pg.libpq_url(url))


def postgres_snapshot(url: str) -> dict[str, str]:
    """Every shop table's rows, hashed in a stable order: equal snapshots mean unchanged data."""
    import psycopg
    from sqlalchemy import make_url

    snapshot = {}
    with psycopg.connect(_libpq_url(make_url(url))) as connection:
        tables = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        ).fetchall()
        for (table,) in tables:
            rows = connection.execute(f'SELECT * FROM "{table}" ORDER BY 1, 2').fetchall()
            snapshot[table] = hashlib.sha256(repr(rows).encode()).hexdigest()
    return snapshot


@pytest.fixture(scope="session")
def snapshot_postgres() -> object:
    """``snapshot(url)``: a hash per shop table, to prove a database unchanged."""
    return postgres_snapshot


@pytest.fixture(scope="session")
def sha256_of() -> object:
    """``sha256(path)``: a file's hash, to prove a SQLite file unchanged byte for byte."""
    return file_sha256
