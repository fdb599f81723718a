"""Two builders of an experiment's metric columns on PostgreSQL (the run's thread, and a
comparison that found them pending) take turns on the pending mark: the second finds the
first's columns stored and stores nothing, instead of failing on a duplicate key. A delete
of the experiment while its columns are being stored waits for them, instead of deadlocking."""

from __future__ import annotations

import threading
import uuid

import psycopg

from assay import Client
from assay.store import _columns as columns


def _marked_experiment(client: Client) -> str:
    """A finished experiment of 20 rows whose run's column build is over, marked pending again."""
    results = client.evaluate(
        lambda inputs: {"y": inputs["x"]},
        data=[{"inputs": {"x": i}, "outputs": {"y": i}} for i in range(20)],
        evaluators=[lambda outputs, reference_outputs: outputs == reference_outputs],
    )
    for thread in threading.enumerate():
        if thread.name == "assay-columns":
            thread.join()
    record = client.store.get_experiment(name=results.experiment_name)
    assert record is not None
    with client.store.transaction() as conn:  # type: ignore[attr-defined]
        columns.mark_pending(conn, str(record.id))
    return str(record.id)


def test_a_second_builder_waits_for_the_first_and_leaves_its_columns(postgres_store_url: str) -> None:
    client = Client(postgres_store_url)
    store = client.store
    experiment_id = _marked_experiment(client)
    built = columns.read(store.conn, experiment_id)  # type: ignore[attr-defined]
    outcome: list[object] = []
    with psycopg.connect(postgres_store_url) as first:  # the first builder, about to store
        first.execute(
            "SELECT 1 FROM metric_column_sets WHERE experiment_id = %s AND built_at IS NULL FOR UPDATE",
            (experiment_id,),
        )
        second = threading.Thread(target=lambda: outcome.append(_build(store, experiment_id)))
        second.start()
        waited = _waits_for_a_lock(postgres_store_url, second)
        first.execute(
            "UPDATE metric_column_sets SET runs = %s, repeated = 0, built_at = 'now' WHERE experiment_id = %s",
            (built.runs, experiment_id),
        )
        for column in built.metrics.values():
            first.execute(
                "INSERT INTO metric_columns (experiment_id, key, results, one_per_row, unique_keys, keys_digest, "
                "id_format, example_ids, repetitions, scores, outcomes) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (experiment_id, column.key, column.results, int(column.one_per_row), int(column.unique_keys),
                 column.keys_digest, column.id_format, column.example_ids, column.repetitions, column.scores,
                 column.outcomes),
            )  # fmt: skip
        first.commit()
        second.join()
    assert waited and outcome == [None]  # it stored nothing: the first builder's columns stand
    loaded = columns.load(store.conn, experiment_id)  # type: ignore[attr-defined]
    assert loaded is not None and loaded.runs == 20
    client.close()


def test_a_delete_during_a_build_waits_for_it_instead_of_deadlocking(postgres_store_url: str) -> None:
    """The build locks the pending mark, then stores columns that refer to the experiment;
    a delete locks the experiment, then its cascade the mark: in that order each waits for
    the other (PostgreSQL aborts one). The build now holds the experiment's row first."""
    client = Client(postgres_store_url)
    store = client.store
    experiment_id = _marked_experiment(client)
    outcome: list[object] = []
    deleted: list[object] = []
    with psycopg.connect(postgres_store_url) as gate:  # holds the build just before its insert
        gate.execute("LOCK TABLE metric_columns IN EXCLUSIVE MODE")
        build = threading.Thread(target=lambda: outcome.append(_build(store, experiment_id)))
        build.start()
        assert _waits_for_a_lock(postgres_store_url, build, sessions=1)
        delete = threading.Thread(target=lambda: deleted.append(_delete(client, experiment_id)))
        delete.start()
        assert _waits_for_a_lock(postgres_store_url, delete, sessions=2)
        gate.commit()
        build.join()
        delete.join()
    assert deleted == [None], deleted  # deleted, not chosen as a deadlock's victim
    assert len(outcome) == 1 and not isinstance(outcome[0], Exception), outcome
    assert client.store.get_experiment(id=uuid.UUID(experiment_id)) is None
    client.close()


def _delete(client: Client, experiment_id: str) -> object:
    try:
        client.store.delete_experiment(uuid.UUID(experiment_id))
    except Exception as exc:  # noqa: BLE001 - the test reads it
        return exc
    return None


def _build(store: object, experiment_id: str) -> object:
    try:
        return columns.build_marked(store, experiment_id)
    except Exception as exc:  # noqa: BLE001 - the test reads it
        return exc


def _waits_for_a_lock(url: str, thread: threading.Thread, sessions: int = 1) -> bool:
    """Whether ``sessions`` sessions come to wait for a lock before ``thread`` ends (polled)."""
    with psycopg.connect(url, autocommit=True) as conn:
        while thread.is_alive():
            waiting = conn.execute(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if waiting and waiting[0] >= sessions:
                return True
            conn.execute("SELECT pg_sleep(0.01)")
    return False
