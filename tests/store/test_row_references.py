"""A run's and a result's references on PostgreSQL keep every promise of the foreign keys
they replaced (``assay.store.postgres._integrity``): a row naming a missing experiment or
run is refused with the whole statement, deletes cascade, a referenced id cannot change,
and a concurrent delete of an experiment either waits for a batch and takes its rows with
it, or makes the batch fail. Each test runs on the schema before the change (foreign
keys) and on that same database migrated in place, with rows written before it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from assay.store import open_store
from assay.store._schema import MIGRATIONS, POSTGRES_ROW_REFERENCES
from assay.store.postgres import postgres_migrations

set_back = sys.modules["assay_tests_schema_history"].set_back  # tests/_schema_history.py

E1, E2 = "00000000-0000-4000-8000-0000000000e1", "00000000-0000-4000-8000-0000000000e2"
CREATED = "2026-01-01T00:00:00+00:00"
BEFORE = MIGRATIONS.index(POSTGRES_ROW_REFERENCES)


@pytest.fixture(params=["foreign keys", "statement triggers"])
def url(request: pytest.FixtureRequest, postgres_server_url: str) -> Iterator[str]:
    """A database at the schema before the change, holding two experiments with a run and
    a result each; with "statement triggers", opened by the store (migrated in place)."""
    pg = sys.modules["assay_tests_postgres"]
    url = str(pg.create_database(postgres_server_url))
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        for script in postgres_migrations()[:BEFORE]:
            conn.execute(script)
        conn.execute("INSERT INTO meta VALUES ('schema_version', %s)", (str(BEFORE),))
        for exp in (E1, E2):
            conn.execute(
                "INSERT INTO experiments (id, name, status, created_at) VALUES (%s, %s, 'running', %s)",
                (exp, exp, CREATED),
            )
            _run(conn, f"old-{exp}", exp)
            _result(conn, f"old-{exp}", exp)
    if request.param == "statement triggers":
        open_store(url).close()
    try:
        yield url
    finally:
        pg.drop_database(postgres_server_url, url)


def _run(conn: Any, run_id: str, exp: str) -> None:
    conn.execute(
        "INSERT INTO runs (id, experiment_id, example_id, repetition, position) VALUES (%s, %s, %s, 0, 0)",
        (run_id, exp, run_id),
    )


def _result(conn: Any, run_id: str, exp: str) -> None:
    conn.execute("INSERT INTO results (experiment_id, run_id, key) VALUES (%s, %s, 'k')", (exp, run_id))


def _count(url: str, sql: str, params: tuple[Any, ...] = ()) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        return int(conn.execute(sql, params).fetchone()[0])  # type: ignore[index]


def _copy(conn: Any, table: str, columns: str, rows: list[tuple[Any, ...]]) -> None:
    with conn.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def test_the_migration_replaced_the_foreign_keys_when_it_ran(url: str) -> None:
    version = _count(url, "SELECT value::int FROM meta WHERE key = 'schema_version'")
    keys = _count(
        url,
        "SELECT COUNT(*) FROM pg_constraint WHERE contype = 'f' AND conrelid IN ('runs'::regclass, 'results'::regclass)",
    )
    assert keys == (3 if version == BEFORE else 0)
    assert _count(url, "SELECT COUNT(*) FROM runs") == 2  # rows written before it are kept


@pytest.mark.parametrize(
    ("table", "columns", "row"),
    [
        (
            "runs",
            "id, experiment_id, example_id, repetition, position",
            ("r", "no-such-experiment", "x", 0, 0),
        ),
        ("results", "experiment_id, run_id, key", (E1, "no-such-run", "k")),
        ("results", "experiment_id, run_id, key", ("no-such-experiment", f"old-{E1}", "k")),
    ],
)
def test_a_copy_with_one_dangling_row_stores_none_of_its_rows(
    url: str, table: str, columns: str, row: tuple[Any, ...]
) -> None:
    before = _count(url, f"SELECT COUNT(*) FROM {table}")
    good = [("a", E1, "a", 0, 1), ("b", E2, "b", 0, 1)] if table == "runs" else [(E1, f"old-{E1}", "x")] * 2
    after = ("c", E1, "c", 0, 2) if table == "runs" else good[0]  # the bad row is not the last
    with psycopg.connect(url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.ForeignKeyViolation) as refused:
            _copy(conn, table, columns, [*good, row, after])
        assert "no-such" in str(refused.value.diag.message_detail)  # which row, and what it names
        with pytest.raises(psycopg.errors.ForeignKeyViolation):  # and one row, by INSERT
            conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(row))})", row)
    assert _count(url, f"SELECT COUNT(*) FROM {table}") == before


def test_rows_naming_what_is_stored_are_taken(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        _copy(conn, "runs", "id, experiment_id, example_id, repetition, position", [("n1", E1, "n1", 0, 1)])
        _copy(conn, "results", "experiment_id, run_id, key", [(E1, "n1", "k"), (E1, f"old-{E1}", "j")])
    assert _count(url, "SELECT COUNT(*) FROM results WHERE experiment_id = %s", (E1,)) == 3


def test_deleting_an_experiment_deletes_its_runs_and_results_only(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        _run(conn, "second", E1)
        _result(conn, "second", E1)
        conn.execute("DELETE FROM experiments WHERE id = %s", (E1,))
    assert _count(url, "SELECT COUNT(*) FROM runs WHERE experiment_id = %s", (E1,)) == 0
    assert _count(url, "SELECT COUNT(*) FROM results WHERE experiment_id = %s", (E1,)) == 0
    assert _count(url, "SELECT COUNT(*) FROM runs WHERE experiment_id = %s", (E2,)) == 1
    assert _count(url, "SELECT COUNT(*) FROM results WHERE experiment_id = %s", (E2,)) == 1


def test_deleting_a_run_deletes_its_results(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM runs WHERE id = %s", (f"old-{E1}",))
    assert _count(url, "SELECT COUNT(*) FROM results WHERE run_id = %s", (f"old-{E1}",)) == 0
    assert _count(url, "SELECT COUNT(*) FROM results") == 1


@pytest.mark.parametrize(
    "change",
    [
        f"UPDATE experiments SET id = 'moved' WHERE id = '{E1}'",
        f"UPDATE runs SET id = 'moved' WHERE id = 'old-{E1}'",
        f"UPDATE runs SET experiment_id = 'nowhere' WHERE id = 'old-{E1}'",
        f"UPDATE results SET run_id = 'nowhere' WHERE run_id = 'old-{E1}'",
    ],
)
def test_a_reference_cannot_be_changed_to_dangle(url: str, change: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn, pytest.raises(psycopg.errors.ForeignKeyViolation):
        conn.execute(change)
    assert (
        _count(url, "SELECT COUNT(*) FROM runs WHERE id = %s AND experiment_id = %s", (f"old-{E1}", E1)) == 1
    )


def _waits_for_a_lock(url: str, pid: int, thread: threading.Thread) -> bool:
    """Whether backend ``pid`` comes to wait for a lock before ``thread`` (its client) ends
    (polled: no clock bounds the wait)."""
    with psycopg.connect(url, autocommit=True) as conn:
        while thread.is_alive():
            state = conn.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,))
            if state.fetchone() == ("Lock",):
                return True
            conn.execute("SELECT pg_sleep(0.01)")
    return False


def test_an_experiment_deleted_during_a_batch_waits_for_it_and_takes_its_rows(url: str) -> None:
    with psycopg.connect(url) as writer, psycopg.connect(url, autocommit=True) as deleter:
        _copy(writer, "runs", "id, experiment_id, example_id, repetition, position", [("w", E1, "w", 0, 1)])
        _copy(writer, "results", "experiment_id, run_id, key", [(E1, "w", "k")])
        deleting = threading.Thread(
            target=deleter.execute, args=("DELETE FROM experiments WHERE id = %s", (E1,))
        )
        deleting.start()
        held_back = _waits_for_a_lock(url, deleter.info.backend_pid, deleting)  # by the batch's lock
        writer.commit()
        deleting.join()
    assert held_back
    assert _count(url, "SELECT COUNT(*) FROM runs WHERE experiment_id = %s", (E1,)) == 0
    assert _count(url, "SELECT COUNT(*) FROM results WHERE experiment_id = %s", (E1,)) == 0


def test_a_batch_after_an_uncommitted_delete_of_its_experiment_fails_once_it_commits(url: str) -> None:
    with psycopg.connect(url) as deleter, psycopg.connect(url, autocommit=True) as writer:
        deleter.execute("DELETE FROM experiments WHERE id = %s", (E1,))
        failure: list[BaseException] = []

        def write() -> None:
            try:
                _copy(
                    writer,
                    "runs",
                    "id, experiment_id, example_id, repetition, position",
                    [("w", E1, "w", 0, 1)],
                )
            except BaseException as exc:  # noqa: BLE001 - the test reads it
                failure.append(exc)

        writing = threading.Thread(target=write)
        writing.start()
        held_back = _waits_for_a_lock(url, writer.info.backend_pid, writing)
        deleter.commit()
        writing.join()
    assert held_back
    assert len(failure) == 1 and isinstance(failure[0], psycopg.errors.ForeignKeyViolation)
    assert _count(url, "SELECT COUNT(*) FROM runs WHERE experiment_id = %s", (E1,)) == 0


def test_a_store_set_back_to_before_the_migration_takes_it_again(url: str) -> None:
    open_store(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        set_back(conn, BEFORE, mark="%s")  # its triggers stay: the migration takes them again
    open_store(url).close()
    triggers = _count(url, "SELECT COUNT(*) FROM pg_trigger WHERE tgname = 'results_have_runs'")
    assert triggers == 1 and _count(url, "SELECT value::int FROM meta WHERE key = 'schema_version'") > BEFORE
    with psycopg.connect(url, autocommit=True) as conn, pytest.raises(psycopg.errors.ForeignKeyViolation):
        _result(conn, "no-such-run", E1)
