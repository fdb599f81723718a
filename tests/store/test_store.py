"""The embedded store: persistence, schema versions, dataset versions, URLs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from assay import Client
from assay.store import AlreadyExistsError, StoreError, StoreVersionError, open_store
from assay.store._schema import SCHEMA_VERSION


@pytest.fixture
def client(any_client: Client) -> Client:
    """The tests here exercise the store: each runs on SQLite and on PostgreSQL."""
    return any_client


def test_every_row_is_stored_when_evaluate_returns(tmp_path: Path, examples: list[dict]) -> None:
    db = tmp_path / "assay.db"

    def check(outputs, reference_outputs) -> bool:
        return outputs["y"] == reference_outputs["y"]

    results = Client(str(db)).evaluate(
        lambda inputs: {"y": 2 * inputs["x"]}, data=examples, evaluators=[check], experiment="persisted"
    )
    with sqlite3.connect(db) as conn:
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        scores = [row[0] for row in conn.execute("SELECT score FROM results ORDER BY pk")]
        status = conn.execute("SELECT status FROM experiments").fetchone()[0]
    assert runs == 6 and scores == [1.0] * 6 and status == "completed"
    reopened = Client(f"sqlite:///{db}").read_experiment("persisted")
    assert [row["run"].outputs for row in reopened] == [row["run"].outputs for row in results]
    assert [row["example"].id for row in reopened] == [row["example"].id for row in results]


def test_a_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "future.db"
    Client(str(db)).create_dataset("kept")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(
        StoreVersionError,
        match=f"schema version 99, newer than this assay understands \\({SCHEMA_VERSION}\\)",
    ):
        Client(str(db))
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT name FROM datasets").fetchone()[0] == "kept"
        assert conn.execute("SELECT value FROM meta").fetchone()[0] == "99"


def test_migrations_record_the_version(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    open_store(str(db)).close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
            SCHEMA_VERSION
        )


def test_editing_a_dataset_never_rewrites_what_an_experiment_ran_on(client: Client) -> None:
    client.create_dataset("qa")
    [first, second] = client.create_examples(
        inputs=[{"q": "2+2"}, {"q": "3+3"}], outputs=[{"a": "4"}, {"a": "7"}], dataset_name="qa"
    )["example_ids"]

    def exact(outputs, reference_outputs) -> bool:
        return outputs["a"] == reference_outputs["a"]

    def solver(inputs: dict) -> dict:
        return {"a": str(eval(inputs["q"], {"__builtins__": {}}))}

    before = client.evaluate(solver, data="qa", evaluators=[exact], experiment="before-fix")
    assert before.aggregate["exact"].mean == 0.5
    client.update_example(second, outputs={"a": "6"})  # fix the wrong label
    client.delete_example(first)
    client.create_example({"q": "1+1"}, outputs={"a": "2"}, dataset_name="qa")
    after = client.evaluate(solver, data="qa", evaluators=[exact], experiment="after-fix")
    assert after.aggregate["exact"].mean == 1.0
    assert [e.inputs["q"] for e in client.list_examples(dataset_name="qa")] == ["3+3", "1+1"]
    old = client.read_experiment("before-fix")
    assert [row["example"].outputs["a"] for row in old] == ["4", "7"]
    assert old.aggregate["exact"].mean == 0.5
    assert [e.outputs["a"] for e in client.list_examples(dataset_name="qa", as_of=1)] == ["4", "7"]
    assert client.read_dataset(dataset_name="qa").version == 4


@pytest.mark.parametrize("form", ["path", "sqlite:///{}", "relative"])
def test_url_forms(tmp_path: Path, form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "forms.db"
    url = {"path": str(path), "sqlite:///{}": f"sqlite:///{path}", "relative": "sqlite:///forms.db"}[form]
    store = open_store(url)
    store.create_dataset("d")
    store.close()
    assert open_store(str(path)).get_dataset(name="d") is not None


def test_environment_variable_and_memory_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", str(tmp_path / "env.db"))
    Client().create_dataset("from-env")
    assert (tmp_path / "env.db").exists()
    memory = Client("sqlite://")
    memory.create_dataset("m")
    assert [d.name for d in memory.list_datasets()] == ["m"]


def test_unsupported_url_and_duplicate_names_are_clear(client: Client) -> None:
    with pytest.raises(StoreError, match="unsupported database URL 'mysql://x'"):
        open_store("mysql://x")
    client.create_dataset("dup")
    with pytest.raises(AlreadyExistsError, match="a dataset named 'dup' already exists"):
        client.create_dataset("dup")
