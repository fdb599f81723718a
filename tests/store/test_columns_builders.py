"""Two builders of an experiment's metric columns on PostgreSQL (the run's thread, and a
comparison that found them pending) take turns on the pending mark: the second finds the
first's columns stored and stores nothing, instead of failing on a duplicate key."""

from __future__ import annotations

import threading

import psycopg

from assay import Client
from assay.store import _columns as columns


def test_a_second_builder_waits_for_the_first_and_leaves_its_columns(postgres_store_url: str) -> None:
    client = Client(postgres_store_url)
    results = client.evaluate(
        lambda inputs: {"y": inputs["x"]},
        data=[{"inputs": {"x": i}, "outputs": {"y": i}} for i in range(20)],
        evaluators=[lambda outputs, reference_outputs: outputs == reference_outputs],
    )
    for thread in threading.enumerate():
        if thread.name == "assay-columns":
            thread.join()
    store = client.store
    record = store.get_experiment(name=results.experiment_name)
    assert record is not None
    experiment_id = str(record.id)
    with store.transaction() as conn:  # type: ignore[attr-defined]
        columns.mark_pending(conn, experiment_id)
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


def _build(store: object, experiment_id: str) -> object:
    try:
        return columns.build_marked(store, experiment_id)
    except Exception as exc:  # noqa: BLE001 - the test reads it
        return exc


def _waits_for_a_lock(url: str, thread: threading.Thread) -> bool:
    """Whether some session comes to wait for a lock before ``thread`` ends (polled)."""
    with psycopg.connect(url, autocommit=True) as conn:
        while thread.is_alive():
            waiting = conn.execute(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if waiting and waiting[0]:
                return True
            conn.execute("SELECT pg_sleep(0.01)")
    return False
