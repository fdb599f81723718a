"""PostgreSQL against what a model can send beyond writes: privileged roles, SQL hidden in
strings, session state that outlives a rolled-back transaction. On the real server conftest starts."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import make_url

from assay.evaluators import SQLExecutionEvaluator
from assay.evaluators.sql.backends.base import ExecutionLimits, QueryError, QueryRefusedError
from assay.evaluators.sql.backends.postgres import PostgresDatabase
from assay.schemas import EvaluationResult, Example, Run

pytestmark = pytest.mark.slow  # the session starts a PostgreSQL server (a few seconds)

HOSTNAME_FILE = "/etc/hostname"


def libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def evaluate(
    evaluator: SQLExecutionEvaluator, generated: str, reference: str = "SELECT 1"
) -> EvaluationResult:
    result = evaluator.evaluate(Run(outputs={"sql": generated}), Example(outputs={"sql": reference}))
    assert isinstance(result, EvaluationResult)
    return result


@pytest.fixture
def reader(shop_postgres: str) -> Iterator[SQLExecutionEvaluator]:
    with SQLExecutionEvaluator(shop_postgres, timeout=3) as evaluator:
        yield evaluator


@pytest.fixture
def reader_database(shop_postgres: str) -> Iterator[PostgresDatabase]:
    """The backend itself, to send SQL the parser would refuse: the role must hold on its own."""
    database = PostgresDatabase(shop_postgres, ExecutionLimits(timeout=3))
    yield database
    database.close()


@pytest.fixture
def admin(shop_postgres_admin: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(libpq(shop_postgres_admin), autocommit=True) as connection:
        yield connection


# --- the role ----------------------------------------------------------------------------


def test_a_superuser_url_is_refused_before_any_query_runs(shop_postgres_admin: str) -> None:
    with SQLExecutionEvaluator(shop_postgres_admin, timeout=3) as evaluator:
        result = evaluate(evaluator, "SELECT 1")  # harmless, yet not run as a superuser
    assert result.score is None and result.error is not None
    assert "superuser" in result.error and "unsafe_allow_privileged_role" in result.error


@pytest.mark.parametrize(
    ("grant", "expected"),
    [
        ("GRANT pg_signal_backend TO {role}", "member of pg_signal_backend"),
        ("GRANT pg_read_server_files TO {role}", "member of pg_read_server_files"),
        ("ALTER ROLE {role} REPLICATION", "REPLICATION"),
        # membership through a role it may SET ROLE to, even without INHERIT
        ("CREATE ROLE {role}_admin SUPERUSER NOLOGIN; GRANT {role}_admin TO {role}", "superuser (through"),
        (
            "CREATE ROLE {role}_ops NOLOGIN; GRANT pg_execute_server_program TO {role}_ops; "
            "GRANT {role}_ops TO {role}",
            "member of pg_execute_server_program",
        ),
    ],
)
def test_roles_that_may_do_more_than_read_are_refused(
    shop_postgres: str, admin: psycopg.Connection[Any], grant: str, expected: str
) -> None:
    role = f"risky_{uuid.uuid4().hex[:8]}"
    admin.execute(f"CREATE ROLE {role} LOGIN NOINHERIT")
    admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    try:
        admin.execute(grant.format(role=role))
        url = make_url(shop_postgres).set(username=role).render_as_string(hide_password=False)
        with SQLExecutionEvaluator(url, timeout=3) as evaluator:
            result = evaluate(evaluator, "SELECT 1")
        assert result.score is None and result.error and expected in result.error, result.error
        with SQLExecutionEvaluator(url, timeout=3, unsafe_allow_privileged_role=True) as unsafe:
            assert evaluate(unsafe, "SELECT 1").score == 1  # the explicit opt-out runs it
    finally:
        admin.execute(f"DROP OWNED BY {role}; DROP ROLE {role}")
        for helper in (f"{role}_admin", f"{role}_ops"):
            admin.execute(f"DROP ROLE IF EXISTS {helper}")


def test_the_documented_role_is_accepted(reader: SQLExecutionEvaluator) -> None:
    assert evaluate(reader, "SELECT COUNT(*) FROM orders", "SELECT 600").score == 1


# --- SQL hidden in strings ---------------------------------------------------------------

SMUGGLED_FILE_READS = [
    f"SELECT * FROM ts_stat('SELECT to_tsvector(pg_read_file(''{HOSTNAME_FILE}''))')",
    f"SELECT query_to_xml('SELECT pg_read_file(''{HOSTNAME_FILE}'')', true, false, '')::text",
    f"SELECT xpath('//text()', pg_catalog.query_to_xml('SELECT pg_read_file(''{HOSTNAME_FILE}'')', true, false, ''))",
    "SELECT * FROM ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, to_tsquery(pg_read_file(''/etc/hostname''))')",
]


@pytest.mark.parametrize("sql", SMUGGLED_FILE_READS)
def test_query_text_smuggling_is_refused_even_for_a_superuser(shop_postgres_admin: str, sql: str) -> None:
    hostname = Path(HOSTNAME_FILE).read_text().strip()
    with SQLExecutionEvaluator(shop_postgres_admin, timeout=3, unsafe_allow_privileged_role=True) as unsafe:
        result = evaluate(unsafe, sql)
    assert (result.score, result.value) == (0, "refused"), result.comment
    assert "runs SQL given as text" in (result.comment or "")
    assert hostname not in repr(result.metadata.get("generated"))


@pytest.mark.parametrize("sql", SMUGGLED_FILE_READS)
def test_with_the_parser_bypassed_the_role_cannot_read_files(
    reader_database: PostgresDatabase, sql: str
) -> None:
    with (
        reader_database.session(None) as session,
        pytest.raises(QueryRefusedError, match="permission denied"),
    ):
        session.run(sql)


# --- other sessions ----------------------------------------------------------------------


@pytest.fixture
def victim(shop_postgres: str) -> Iterator[psycopg.Connection[Any]]:
    """Another session of the same role, as a second evaluator process would hold."""
    with psycopg.connect(libpq(shop_postgres), autocommit=True) as connection:
        yield connection


def kill_attempts(pid: int) -> list[str]:
    return [
        f"SELECT pg_terminate_backend({pid})",
        f"SELECT * FROM ts_stat('SELECT to_tsvector(pg_terminate_backend({pid})::text)')",
        f"SELECT query_to_xml('SELECT pg_terminate_backend({pid})', true, false, '')::text",
        f"SELECT pg_cancel_backend({pid})",
    ]


def test_a_select_only_role_cannot_kill_another_session(
    reader: SQLExecutionEvaluator, reader_database: PostgresDatabase, victim: psycopg.Connection[Any]
) -> None:
    pid = victim.info.backend_pid
    for sql in kill_attempts(pid):
        assert evaluate(reader, sql).value == "refused", sql
        with reader_database.session(None) as session, pytest.raises(QueryRefusedError):
            session.run(sql)  # the parser bypassed: the role may not either
    assert victim.execute("SELECT pg_backend_pid()").fetchone() == (pid,)


# --- state that outlives the transaction -------------------------------------------------


def lock_is_free(admin: psycopg.Connection[Any], key: int) -> bool:
    (taken,) = admin.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone() or (False,)
    if taken:
        admin.execute("SELECT pg_advisory_unlock(%s)", (key,))
    return bool(taken)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT pg_advisory_lock_shared(4242)",
        "SELECT pg_advisory_lock(4242)",
        "SELECT pg_try_advisory_lock_shared(4242)",
        "SELECT * FROM ts_stat('SELECT to_tsvector(pg_advisory_lock_shared(4242)::text)')",
    ],
)
def test_an_advisory_lock_does_not_outlive_its_query(
    reader: SQLExecutionEvaluator,
    reader_database: PostgresDatabase,
    admin: psycopg.Connection[Any],
    sql: str,
) -> None:
    assert evaluate(reader, sql).value == "refused"
    with reader_database.session(None) as session:
        with contextlib.suppress(QueryError):  # parser bypassed: only the lock matters here
            session.run(sql)
        # the pooled connection is still held by this session, and the lock is gone
        assert lock_is_free(admin, 4242)
        assert session.run("SELECT 1").rows == [(1,)]


def test_prepared_statements_and_settings_do_not_outlive_their_query(
    reader_database: PostgresDatabase,
) -> None:
    with reader_database.session(None) as session:
        session.run("PREPARE kept AS SELECT 1")
        with pytest.raises(Exception, match='prepared statement "kept" does not exist'):
            session.run("EXECUTE kept")
        session.run("SET SESSION statement_timeout = 0")
        session.run("SELECT set_config('lock_timeout', '0', false)")
        assert session.run("SELECT current_setting('statement_timeout')").rows == [("3s",)]
        assert session.run("SELECT current_setting('lock_timeout')").rows == [("3s",)]


def test_replication_slots_and_statistics_resets_are_refused(
    reader: SQLExecutionEvaluator,
    reader_database: PostgresDatabase,
    shop_postgres_admin: str,
    admin: psycopg.Connection[Any],
) -> None:
    attempts = [
        "SELECT pg_create_physical_replication_slot('assay_kept_slot')",
        "SELECT * FROM pg_create_logical_replication_slot('assay_kept_slot', 'test_decoding')",
        "SELECT pg_stat_reset()",
        "SELECT pg_stat_reset_shared('bgwriter')",
    ]
    with SQLExecutionEvaluator(shop_postgres_admin, timeout=3, unsafe_allow_privileged_role=True) as unsafe:
        for sql in attempts:
            assert evaluate(reader, sql).value == "refused", sql
            assert evaluate(unsafe, sql).value == "refused", sql
            with (
                reader_database.session(None) as session,
                pytest.raises(QueryRefusedError, match="permission denied|must be superuser"),
            ):
                session.run(sql)
    slots = admin.execute("SELECT slot_name FROM pg_replication_slots").fetchall()
    assert slots == []
