"""Both stores, SQLite and PostgreSQL (a real server): the same answers, schema versions and
forward migrations, several processes writing at once, and no password in any message."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from assay import Client
from assay.schemas import Feedback
from assay.store import StoreError, StoreVersionError, open_store
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION
from assay.store.postgres import postgres_migrations

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"
EVALUATION_TESTS = HERE.parent / "evaluation"  # the killed run, shared with test_resume.py


def raw(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` read around the store, straight from the database."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as lite:
            return lite.execute(sql.replace("%s", "?"), params).fetchall()
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description is not None else []


def check(outputs: dict, reference_outputs: dict) -> bool:
    return bool(outputs["y"] == reference_outputs["y"])


def test_an_experiment_reads_back_the_same_from_either_store(store_url: str, examples: list[dict]) -> None:
    client = Client(store_url)
    results = client.evaluate(
        lambda inputs: {"y": 2 * inputs["x"] if inputs["x"] != 3 else 0},
        data=examples,
        evaluators=[check],
        experiment="persisted",
        num_repetitions=2,
    )
    client.close()
    again = Client(store_url)
    reopened = again.read_experiment("persisted")  # rows are read page by page, while open
    view = [(row["example"].inputs, row["run"].outputs, [r.score for r in row["evaluation_results"]["results"]])
            for row in reopened]  # fmt: skip
    again.close()
    assert view == [
        ({"x": i}, {"y": 2 * i if i != 3 else 0}, [i != 3]) for i in range(6) for _repetition in range(2)
    ]
    assert reopened.aggregate["check"].mean == results.aggregate["check"].mean == pytest.approx(10 / 12)
    assert raw(store_url, "SELECT COUNT(*), SUM(failed) FROM runs")[0] == (12, 2)
    assert raw(store_url, "SELECT status FROM experiments") == [("completed",)]


def test_feedback_scores_cache_bytes_and_odd_text_round_trip(store_url: str) -> None:
    store = open_store(store_url)
    for key, score in [("int", 3), ("float", 1.0), ("bool", True), ("none", None)]:
        store.add_feedback(Feedback(key=key, score=score, comment="a\x00b", value={"k": [1, 2.5]}))
    got = {f.key: f.score for f in store.list_feedback()}
    assert got == {"int": 3, "float": 1.0, "bool": 1, "none": None}
    assert type(got["int"]) is int and type(got["float"]) is float
    comments = {f.comment for f in store.list_feedback()}
    assert comments == ({"a\x00b"} if store_url.startswith("sqlite") else {"a\\0b"})  # NUL: PostgreSQL text
    store.cache_put("ns", "k", b"\x00\xffbytes")
    store.cache_put("ns", "k", b"replaced")
    assert store.cache_get("ns", "k") == b"replaced" and store.cache_get("ns", "missing") is None
    store.close()


def test_migrations_record_the_version(store_url: str) -> None:
    open_store(store_url).close()
    assert raw(store_url, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    assert len(postgres_migrations()) == len(MIGRATIONS)  # one PostgreSQL script per SQLite one


def test_a_newer_schema_is_refused_and_left_untouched(store_url: str) -> None:
    first = Client(store_url)
    first.create_dataset("kept")
    first.close()
    raw(store_url, "UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    match = f"schema version 99, newer than this assay understands \\({SCHEMA_VERSION}\\); upgrade assay"
    with pytest.raises(StoreVersionError, match=match):
        Client(store_url)
    assert raw(store_url, "SELECT name FROM datasets") == [("kept",)]
    assert raw(store_url, "SELECT value FROM meta") == [("99",)]


@pytest.fixture
def empty_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database for ``backend`` (the test's parameter)."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'old.db'}"
    server = request.getfixturevalue("postgres_server_url")
    pg = sys.modules["assay_tests_postgres"]
    url = str(pg.create_database(server))
    request.addfinalizer(lambda: pg.drop_database(server, url))
    return url


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_older_schema_is_migrated_forward_keeping_its_rows(backend: str, empty_url: str) -> None:
    """A store at schema version 1 (rows, no stored figures or failed flags) opens at the
    current version, with the added columns computed from the old rows."""
    old = [f"{MIGRATIONS[0]}\nINSERT INTO meta VALUES ('schema_version', '1');"]
    e, created = "00000000-0000-4000-8000-00000000000e", "2026-01-01T00:00:00+00:00"
    old.append(
        f"INSERT INTO experiments (id, name, status, created_at) VALUES ('{e}', 'old', 'completed', '{created}');"
        "INSERT INTO runs (id, experiment_id, example_id, repetition, position) VALUES "
        f"('r0', '{e}', 'x0', 0, 0), ('r1', '{e}', 'x1', 0, 1), ('r2', '{e}', 'x2', 0, 2);"
        "INSERT INTO results (experiment_id, run_id, key, score) VALUES "
        f"('{e}', 'r0', 'k', 1.0), ('{e}', 'r1', 'k', 0.0);"
    )
    if backend == "sqlite":
        with sqlite3.connect(empty_url.removeprefix("sqlite:///")) as conn:
            conn.executescript("\n".join(old))
    else:
        with psycopg.connect(empty_url, autocommit=True) as conn:
            conn.execute(postgres_migrations()[0])
            conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
            conn.execute(old[1])
    store = open_store(empty_url)
    record = store.get_experiment(name="old")
    assert record is not None and store.count_rows(record.id) == 3
    store.close()
    assert raw(empty_url, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    assert raw(empty_url, "SELECT id, failed FROM runs ORDER BY id") == [("r0", 0), ("r1", 1), ("r2", 0)]


def test_passwords_never_reach_a_message(postgres_store_url: str) -> None:
    secret = "s3cr3t-pw"
    with_password = postgres_store_url.replace("postgresql://assay@", f"postgresql://assay:{secret}@")
    assert secret in with_password
    client = Client(with_password)  # the test server trusts loopback: the password goes unused
    assert secret not in client.store.url and "assay:***@" in client.store.url
    with pytest.raises(Exception) as missing:
        client.read_experiment("nope")
    assert secret not in str(missing.value) and "***" in str(missing.value)
    closed_port = f"postgresql+psycopg://assay:{secret}@127.0.0.1:1/db"
    with pytest.raises(
        StoreError, match=r"cannot open the store at postgresql\+psycopg://assay:\*\*\*@"
    ) as down:
        open_store(closed_port)
    assert secret not in str(down.value)
    client.close()


WRITER = textwrap.dedent(
    """
    import sys
    from assay import Client
    client = Client(sys.argv[1])
    def same(outputs, reference_outputs):
        return outputs["y"] == reference_outputs["y"]
    client.evaluate(lambda inputs: {"y": inputs["x"]}, data="shared", evaluators=[same],
                    experiment=sys.argv[2], max_concurrency=4, progress=False)
    """
)


def test_processes_write_different_experiments_at_once(postgres_store_url: str, tmp_path: Path) -> None:
    """Four processes run four experiments on one shared dataset into one database."""
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    setup = Client(postgres_store_url)
    setup.create_dataset("shared")
    setup.create_examples(inputs=[{"x": i} for i in range(150)], outputs=[{"y": i} for i in range(150)],
                          dataset_name="shared")  # fmt: skip
    setup.close()
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    names = [f"writer-{i}" for i in range(4)]
    children = [
        subprocess.Popen(
            [sys.executable, str(script), postgres_store_url, name], env=env, stderr=subprocess.PIPE
        )
        for name in names
    ]
    for child in children:
        _out, err = child.communicate(timeout=240)
        assert child.returncode == 0, err.decode()
    client = Client(postgres_store_url)
    for name in names:
        results = client.read_experiment(name)
        assert len(results) == 150 and results.aggregate["same"].mean == 1.0
    assert raw(postgres_store_url, "SELECT COUNT(*), COUNT(DISTINCT experiment_id) FROM runs") == [(600, 4)]
    assert raw(postgres_store_url, "SELECT COUNT(*) FROM results") == [(600,)]
    client.close()


@pytest.mark.slow
def test_sigkill_then_resume_on_postgres_loses_and_duplicates_nothing(postgres_store_url: str) -> None:
    sys.path.insert(0, str(EVALUATION_TESTS))
    import _interrupted_run as job

    env = {**os.environ, "PYTHONPATH": str(SRC)}
    child = subprocess.Popen(
        [sys.executable, str(EVALUATION_TESTS / "_interrupted_run.py"), postgres_store_url], env=env
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if raw(postgres_store_url, "SELECT COUNT(*) FROM runs")[0][0] >= 40:
                break
        except psycopg.Error:
            pass  # schema not created yet
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    orphans = "SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.id)"
    assert raw(postgres_store_url, orphans) == [(0,)]
    client = Client(postgres_store_url)
    [record] = client.list_experiments()
    assert record.status == "running"
    before = len(client.store.completed_keys(record.id))
    total = len(job.DATA) * 2
    assert 40 <= before < total
    calls: list[int] = []

    def counting(inputs: dict) -> dict:
        calls.append(inputs["x"])
        return job.target(inputs)

    resumed = client.evaluate(
        counting, data=job.DATA, evaluators=[job.correct], experiment="interrupted",
        num_repetitions=2, resume=True, max_concurrency=8,
    )  # fmt: skip
    assert len(calls) == total - before and len(resumed) == total
    count, distinct = raw(
        postgres_store_url, "SELECT COUNT(*), COUNT(DISTINCT example_id || ':' || repetition) FROM runs"
    )[0]
    assert count == distinct == total
    assert client.store.get_experiment(name="interrupted").status == "completed"
    client.close()


def test_leases_are_taken_refused_and_counted_across_store_objects(store_url: str) -> None:
    """The lease SQL on both backends, two store objects standing in for two processes."""
    from assay.store.records import ExperimentRecord

    first, second = open_store(store_url), open_store(store_url)
    record = ExperimentRecord(name="split", config={"shards": 2})
    first.create_experiment(record)

    def take(store: Any, token: str, shard: int = 0, ttl: float = 30) -> str:
        return str(store.take_lease(record.id, shard, 2, host="h", pid=1, token=token, ttl=ttl).token)

    assert take(first, "a", ttl=0.3) == "a"
    assert take(second, "b") == "a"  # live: refused, told who holds it
    time.sleep(0.35)
    assert take(second, "b") == "b"  # expired: taken over
    assert not first.renew_lease(record.id, 0, "a", 30)
    assert take(first, "c", shard=1) == "c"
    assert second.finish_shard(record.id, 0, "b") == (1, 2)
    stored = first.get_experiment(id=record.id)
    assert stored is not None and stored.status == "partial"
    assert first.finish_shard(record.id, 1, "c") == (2, 2)
    assert [lease.state for lease in second.list_leases(record.id)] == ["done", "done"]
    first.close()
    second.close()


def test_a_new_experiment_is_created_with_its_lease_or_not_at_all(store_url: str) -> None:
    """A run's start is one transaction: the experiment and its shard's lease. A name
    already taken stores neither, and the lease then stays the first creator's."""
    from assay.errors import AlreadyExistsError
    from assay.store.records import ExperimentRecord, LeaseClaim

    first, second = open_store(store_url), open_store(store_url)
    record = ExperimentRecord(name="leased")
    first.create_experiment(record, LeaseClaim(0, 1, "h", 1, "a", ttl=30))
    held = second.take_lease(record.id, 0, 1, host="h", pid=2, token="b", ttl=30)
    assert (held.token, held.state, held.pid) == ("a", "running", 1)  # live: the creator's
    assert held.expires_at > time.time()
    rival = ExperimentRecord(name="leased")
    with pytest.raises(AlreadyExistsError):
        second.create_experiment(rival, LeaseClaim(0, 1, "h", 2, "b", ttl=30))
    assert raw(store_url, "SELECT token FROM leases") == [("a",)]
    assert first.finish_shard(record.id, 0, "a") == (1, 1)
    first.close()
    second.close()


OPENER = "import sys; from assay.store import open_store; open_store(sys.argv[1]).close()"


def test_processes_opening_a_new_database_at_once_create_the_schema_once(postgres_server_url: str) -> None:
    pg = sys.modules["assay_tests_postgres"]
    url = str(pg.create_database(postgres_server_url))
    try:
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        children = [
            subprocess.Popen([sys.executable, "-c", OPENER, url], env=env, stderr=subprocess.PIPE)
            for _ in range(4)
        ]
        for child in children:
            _out, err = child.communicate(timeout=120)
            assert child.returncode == 0, err.decode()
        assert raw(url, "SELECT key, value FROM meta") == [("schema_version", str(SCHEMA_VERSION))]
    finally:
        pg.drop_database(postgres_server_url, url)


def test_a_paired_comparison_reads_the_same_from_either_store(store_url: str) -> None:
    """assay.compare's SQL (sums, clusters, repetitions) gives equal figures on both backends."""
    from assay import compare

    client = Client(store_url)
    data = [{"inputs": {"x": i}, "outputs": {"y": i}, "metadata": {"group": i % 3}} for i in range(12)]

    def close(outputs: dict, reference_outputs: dict) -> float:
        return 1.0 - min(abs(outputs["y"] - reference_outputs["y"]), 4) / 4

    client.evaluate(lambda inputs: {"y": inputs["x"] + inputs["x"] % 2}, data=data, evaluators=[check, close],
                    experiment="a", num_repetitions=2)  # fmt: skip
    client.evaluate(lambda inputs: {"y": inputs["x"]}, data=data, evaluators=[check, close],
                    experiment="b", num_repetitions=2)  # fmt: skip
    result = compare("a", "b", client=client, cluster_by="group")
    view = {m.key: (m.n_paired, m.mean_a, m.mean_b, m.p_value) for m in result.metrics}
    # B is better on every odd example of every cluster: no variance left, p is 0
    assert view == {"check": (12, 0.5, 1.0, 0.0), "close": (12, 0.875, 1.0, 0.0)}
    client.close()
