"""Attachments in the store, on SQLite and on PostgreSQL (a real server): each content
stored once, linked per example version (an earlier version reads the files it had),
collected when the last dataset holding them is deleted, refused over the size limit."""

from __future__ import annotations

import hashlib
import io
import pickle
import sqlite3
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from assay import Client
from assay.errors import AttachmentError, NotFoundError
from assay.schemas import Attachment, Example
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION
from assay.store.attachments import StoredAttachment
from assay.store.postgres import postgres_migrations

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def raw(url: str, sql: str) -> list[tuple[Any, ...]]:
    """Rows read around the store, straight from the database."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as lite:
            return lite.execute(sql).fetchall()
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture
def client(store_url: str) -> Any:
    client = Client(store_url)
    yield client
    client.close()


def files_of(example: Example) -> dict[str, tuple[str, bytes]]:
    return {name: (a["mime_type"], a["reader"].read()) for name, a in (example.attachments or {}).items()}


def test_the_same_content_is_stored_once_and_read_back_by_each_example(
    client: Client, store_url: str
) -> None:
    client.create_dataset("a")
    client.create_dataset("b")
    client.create_examples(
        dataset_name="a",
        examples=[
            {"inputs": {"i": 0}, "attachments": {"image": ("image/png", PNG), "note": ("text/plain", b"hi")}},
            {"inputs": {"i": 1}, "attachments": {"same": Attachment("image/png", PNG)}},
        ],
    )
    client.create_example(
        {"i": 2}, dataset_name="b", attachments={"copy": {"mime_type": "image/png", "data": PNG}}
    )
    assert raw(store_url, "SELECT COUNT(*) FROM blobs") == [(2,)]  # PNG once, "hi" once
    assert raw(store_url, "SELECT COUNT(*) FROM example_attachments") == [(4,)]
    first, second = client.list_examples(dataset_name="a")
    assert files_of(first) == {"image": ("image/png", PNG), "note": ("text/plain", b"hi")}
    assert files_of(second) == {"same": ("image/png", PNG)}
    [other] = client.list_examples(dataset_name="b")
    assert files_of(other) == {"copy": ("image/png", PNG)}
    stored = first.attachments["image"]
    assert isinstance(stored, StoredAttachment) and stored.sha256 == hashlib.sha256(PNG).hexdigest()


def test_a_reader_is_readable_any_number_of_times(client: Client) -> None:
    client.create_dataset("a")
    client.create_example({"i": 0}, dataset_name="a", attachments={"f": ("text/plain", b"content")})
    [example] = client.list_examples(dataset_name="a")
    attachment = example.attachments["f"]
    assert [attachment["reader"].read() for _ in range(3)] == [b"content"] * 3
    assert attachment["presigned_url"] == "data:text/plain;base64,Y29udGVudA=="
    assert dict(attachment)["mime_type"] == "text/plain"
    # a worker process gets it with its bytes (it cannot reach this store)
    assert pickle.loads(pickle.dumps(example)).attachments["f"]["reader"].read() == b"content"


def test_each_version_reads_the_files_it_had(client: Client) -> None:
    client.create_dataset("a")
    created = client.create_examples(
        dataset_name="a", examples=[{"inputs": {"i": 0}, "attachments": {"f": ("text/plain", b"v1")}}]
    )
    [example_id] = created["example_ids"]
    first = created["as_of"]
    renamed = client.update_example(
        example_id, attachments_operations={"rename": {"f": "g"}}, attachments={"h": ("text/plain", b"v2")}
    )
    edited_inputs = client.update_example(example_id, inputs={"i": 1})  # files kept as they are
    dropped = client.update_example(example_id, attachments_operations={"retain": []})
    seen = {
        v: files_of(client.list_examples(dataset_name="a", as_of=v)[0])
        for v in (first, renamed, edited_inputs, dropped)
    }
    assert seen == {
        first: {"f": ("text/plain", b"v1")},
        renamed: {"g": ("text/plain", b"v1"), "h": ("text/plain", b"v2")},
        edited_inputs: {"g": ("text/plain", b"v1"), "h": ("text/plain", b"v2")},
        dropped: {},
    }
    assert client.read_example(example_id).attachments is None
    assert files_of(client.read_example(example_id, as_of=renamed)) == seen[renamed]
    dataset = client.read_dataset(dataset_name="a")
    as_iterated = [files_of(e) for e in client.store.iter_examples(dataset.id, version=renamed)]
    assert as_iterated == [seen[renamed]]


def test_deleting_the_last_dataset_holding_a_blob_deletes_it(client: Client, store_url: str) -> None:
    for name in ("a", "b"):
        client.create_dataset(name)
    client.create_example(
        {"i": 0}, dataset_name="a", attachments={"shared": ("image/png", PNG), "own": ("text/plain", b"a")}
    )
    client.create_example({"i": 0}, dataset_name="b", attachments={"shared": ("image/png", PNG)})
    [example] = client.list_examples(dataset_name="a")
    client.delete_example(example.id)  # still in the dataset's earlier version: kept
    assert raw(store_url, "SELECT COUNT(*) FROM blobs") == [(2,)]
    client.delete_dataset(dataset_name="a")
    assert raw(store_url, "SELECT COUNT(*) FROM blobs") == [(1,)]  # "own" went, "shared" is b's
    client.delete_dataset(dataset_name="b")
    assert raw(store_url, "SELECT COUNT(*) FROM blobs") == [(0,)]
    assert raw(store_url, "SELECT COUNT(*) FROM example_attachments") == [(0,)]
    with pytest.raises(NotFoundError, match="was deleted"):
        example.attachments["own"]["reader"]  # its bytes were never read, and now are gone


def test_over_the_limit_is_refused_naming_example_name_size_and_setting(
    client: Client, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_MAX_ATTACHMENT_BYTES", "1000")
    client.create_dataset("a")
    with pytest.raises(AttachmentError) as refused:
        client.create_examples(
            dataset_name="a",
            examples=[
                {
                    "inputs": {"i": 0},
                    "id": "00000000-0000-4000-8000-000000000001",
                    "attachments": {"ok": ("text/plain", b"x")},
                },
                {
                    "inputs": {"i": 1},
                    "id": "00000000-0000-4000-8000-000000000002",
                    "attachments": {"big.png": ("image/png", PNG)},
                },
            ],
        )
    message = str(refused.value)
    for part in (
        "00000000-0000-4000-8000-000000000002",
        "'big.png'",
        "1,032 bytes",
        "1,000 bytes",
        "ASSAY_MAX_ATTACHMENT_BYTES",
        "nothing was stored",
    ):
        assert part in message
    assert client.list_examples(dataset_name="a") == []  # one transaction: the first is not kept
    assert raw(store_url, "SELECT COUNT(*) FROM blobs") == [(0,)]


def test_a_file_over_the_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_MAX_ATTACHMENT_BYTES", "10")
    big = tmp_path / "big.bin"
    with big.open("wb") as handle:  # sparse: 10 GB that a read would have to hold
        handle.truncate(10 * 1024**3)
    client = Client("sqlite://")
    client.create_dataset("a")
    with pytest.raises(AttachmentError, match=r"'f' is 10,737,418,240 bytes"):
        client.create_example(
            {"i": 0},
            dataset_name="a",
            attachments={"f": ("application/octet-stream", big)},
            dangerously_allow_filesystem=True,
        )


@pytest.mark.parametrize(
    "value, message",
    [
        ("text", r"is a str; give \(mime_type, bytes\)"),
        (("text/plain", "text, not bytes"), "its data is text; give bytes"),
        (("", b"x"), "MIME type must be text"),
        (("x" * 300, b"x"), "at most 255 characters"),
        (("text/plain", Path("/no/such/file")), "cannot read /no/such/file"),
    ],
)
def test_what_is_not_a_file_is_refused_saying_what_to_give(value: Any, message: str) -> None:
    client = Client("sqlite://")
    client.create_dataset("a")
    with pytest.raises(AttachmentError, match=message):
        client.create_example(
            {"i": 0}, dataset_name="a", attachments={"f": value}, dangerously_allow_filesystem=True
        )


@pytest.mark.parametrize("name", ["", "line\nbreak", "n" * 256])
def test_a_name_must_be_a_short_label(name: str) -> None:
    client = Client("sqlite://")
    client.create_dataset("a")
    with pytest.raises(AttachmentError, match="name"):
        client.create_example({"i": 0}, dataset_name="a", attachments={name: ("text/plain", b"x")})
    assert client.list_examples(dataset_name="a") == []


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_store_made_before_attachments_takes_them_after_its_migration(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    previous = SCHEMA_VERSION - 1
    dataset, created = "00000000-0000-4000-8000-0000000000d5", "2026-01-01T00:00:00+00:00"
    rows = (
        f"INSERT INTO datasets (id, name, created_at, version) VALUES ('{dataset}', 'old', '{created}', 1);"
        "INSERT INTO examples (id, dataset_id, position, inputs, created_at, added_version) VALUES "
        f"('00000000-0000-4000-8000-0000000000e1', '{dataset}', 0, '{{\"i\": 0}}', '{created}', 1);"
        f"INSERT INTO meta VALUES ('schema_version', '{previous}');"
    )
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
        with sqlite3.connect(tmp_path / "old.db") as conn:
            conn.executescript("\n".join(MIGRATIONS[:previous]) + rows)
    else:
        server = request.getfixturevalue("postgres_server_url")
        pg = sys.modules["assay_tests_postgres"]
        url = str(pg.create_database(server))
        request.addfinalizer(lambda: pg.drop_database(server, url))
        with psycopg.connect(url, autocommit=True) as conn:
            for script in postgres_migrations()[:previous]:
                conn.execute(script)
            conn.execute(rows)
    assert raw(url, "SELECT value FROM meta") == [(str(previous),)]
    client = Client(url)
    try:
        [example] = client.list_examples(dataset_name="old")
        assert example.attachments is None
        client.update_example(example.id, attachments={"f": ("text/plain", b"after")})
        assert files_of(client.read_example(example.id)) == {"f": ("text/plain", b"after")}
    finally:
        client.close()
    assert raw(url, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]


def test_an_attachment_read_back_is_stored_again_from_its_reader_or_by_reference(
    client: Client, store_url: str
) -> None:
    """Copying examples between datasets (or stores) carries their files; a reader given
    half-read is stored whole."""
    client.create_dataset("a")
    client.create_dataset("b")
    reader = io.BytesIO(b"whole file")
    reader.read(5)
    client.create_example(
        {"i": 0}, dataset_name="a", attachments={"r": {"mime_type": "text/plain", "reader": reader}}
    )
    client.create_examples(dataset_name="b", examples=client.list_examples(dataset_name="a"))
    elsewhere = Client("sqlite://")
    elsewhere.create_dataset("c")
    elsewhere.create_examples(dataset_name="c", examples=client.list_examples(dataset_name="a"))
    for target, name in ((client, "b"), (elsewhere, "c")):
        [copied] = target.list_examples(dataset_name=name)
        assert files_of(copied) == {"r": ("text/plain", b"whole file")}
    assert raw(store_url, "SELECT COUNT(*) FROM blobs") == [(1,)]
