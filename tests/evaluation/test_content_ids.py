"""Inline data's example ids: version 8 UUIDs that start with the content's digest and end
with the position. The same data gets the same ids in any store (a rerun resumes), one
dataset's ids are in position order (they append in the examples' index), other data
gets other ids, and a store written before them (version 5 ids) is run on, and resumed,
with the ids it holds."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay import Client
from assay._ids import content_id_texts
from assay.errors import DataError
from assay.evaluation import _data
from assay.evaluation._data import resolve_data

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import _legacy_inline as legacy  # noqa: E402

_digests = st.binary().map(lambda b: hashlib.sha256(b).hexdigest())
_positions = st.integers(min_value=0, max_value=2**32 - 1)


@pytest.fixture
def client(any_client: Client) -> Client:
    """The tests here exercise the store: each runs on SQLite and on PostgreSQL."""
    return any_client


@given(_digests, _positions)
def test_a_content_id_is_the_digest_then_the_position_as_a_version_8_uuid(digest: str, position: int) -> None:
    text = content_id_texts(digest)(position)
    made = uuid.UUID(text)
    assert made == legacy.content_id(digest, position)
    assert str(made) == text  # the canonical text: what LangSmith clients print and compare
    assert made.version == 8 and made.variant == uuid.RFC_4122
    assert made.int & 0xFFFFFFFF == position


@given(_digests, _positions, _positions)
def test_one_datasets_ids_are_in_position_order(digest: str, a: int, b: int) -> None:
    text = content_id_texts(digest)
    assert (text(a) < text(b)) == (a < b)  # as the store's text column sorts them
    assert (uuid.UUID(text(a)) < uuid.UUID(text(b))) == (a < b)


_VERSION_AND_VARIANT = {48, 49, 50, 51, 64, 65}
"""Bits of a UUID, counted from the first, that hold its version and variant."""


@pytest.mark.parametrize("bit", range(96))
def test_every_kept_bit_of_the_digest_changes_every_id(bit: int) -> None:
    """An adversary's data whose digest differs from another's in any of the 90 bits kept
    has other ids at every position; only the version's and variant's 6 bits (and the
    digest's last 160, past the 96 read) are not kept."""
    digest = hashlib.sha256(b"some data").hexdigest()
    other = f"{int(digest, 16) ^ (1 << (255 - bit)):064x}"
    mine, theirs = content_id_texts(digest), content_id_texts(other)
    ignored = bit in _VERSION_AND_VARIANT
    for position in (0, 1, 2**16, 2**32 - 1):
        assert (mine(position) == theirs(position)) == ignored
        assert mine(position) != theirs(position + 1 if position < 2**32 - 1 else 0)


def test_the_kept_bits_are_ninety() -> None:
    assert len(_VERSION_AND_VARIANT) == 6


def test_a_digest_that_is_not_sha256_hex_is_refused() -> None:
    with pytest.raises(ValueError, match="not a SHA-256 hex digest"):
        content_id_texts("abc")


def _ids(client: Client, data: list[dict[str, Any]]) -> list[uuid.UUID]:
    resolved = resolve_data(data, client.store)
    return [example.id for example in client.store.iter_examples(resolved.dataset.id)]


def test_the_same_data_gets_the_same_ordered_ids_in_any_store(client: Client, tmp_path: Path) -> None:
    data = [{"inputs": {"x": i}, "outputs": {"y": -i}} for i in range(3000)]
    ids = _ids(client, data)
    other = Client(str(tmp_path / "other.db"))
    try:
        assert _ids(other, data) == ids
    finally:
        other.close()
    digest = legacy.digest_of(data)
    assert ids == [legacy.content_id(digest, i) for i in range(3000)]
    assert ids == sorted(ids) and [str(i) for i in ids] == sorted(str(i) for i in ids)
    assert len(client.store.list_datasets()) == 1 and _ids(client, data) == ids  # found again


def test_other_data_gets_other_ids(client: Client) -> None:
    data = [{"inputs": {"x": i}} for i in range(500)]
    changed = [*data[:-1], {"inputs": {"x": -1}}]  # one example of 500 differs
    first, second = _ids(client, data), _ids(client, changed)
    assert len(client.store.list_datasets()) == 2
    assert set(first).isdisjoint(second)


def test_given_ids_are_kept_and_the_others_named_by_position(client: Client) -> None:
    given = uuid.uuid4()
    data: list[dict[str, Any]] = [{"inputs": {"x": i}, "outputs": {"y": i}} for i in range(5)]
    data[2] = {**data[2], "id": given, "metadata": {"m": [1, 2]}}
    resolved = resolve_data(data, client.store)
    examples = list(client.store.iter_examples(resolved.dataset.id))
    digest = legacy.digest_of(data)
    assert [e.id for e in examples] == [given if i == 2 else legacy.content_id(digest, i) for i in range(5)]
    assert [(e.inputs, e.outputs, e.metadata) for e in examples] == [
        (d["inputs"], d["outputs"], d.get("metadata")) for d in data
    ]


def test_more_examples_than_the_position_can_say_is_refused(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_data, "MAX_POSITIONS", 3)  # 2**32 examples cannot be made in a test
    with pytest.raises(DataError, match="data holds 4 examples; inline data holds at most 3"):
        resolve_data([{"inputs": {"x": i}} for i in range(4)], client.store)
    assert client.store.list_datasets() == []


def test_a_store_written_before_content_ids_is_run_on_with_its_ids(client: Client) -> None:
    data = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(50)]
    dataset, old_ids = legacy.store_as_before(client.store, data)
    results = client.evaluate(legacy.target, data=data, experiment="on-old", max_concurrency=8)
    rows = list(results)
    assert [row["example"].id for row in rows] == old_ids
    assert {row["run"].reference_example_id for row in rows} == set(old_ids)
    [only] = client.store.list_datasets()  # no second dataset of the same content
    assert only.id == dataset.id and only.version == dataset.version == 1


def test_a_store_written_before_whose_first_examples_were_deleted_is_still_run_on(client: Client) -> None:
    """The user's edits are kept: deleting examples does not make the dataset another's."""
    data = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(50)]
    dataset, old_ids = legacy.store_as_before(client.store, data)
    for example_id in old_ids[:3]:
        client.delete_example(example_id)
    results = client.evaluate(legacy.target, data=data, experiment="edited-old", max_concurrency=8)
    assert [row["example"].id for row in results] == old_ids[3:]
    [only] = client.store.list_datasets()
    assert only.id == dataset.id


class Handle:
    """Not a file: handed to the run only, never stored."""


def test_given_objects_reach_a_run_over_a_store_written_before(client: Client) -> None:
    handles = [Handle() for _ in range(3)]
    data = [{"inputs": {"x": i}, "attachments": {"h": h}} for i, h in enumerate(handles)]
    legacy.store_as_before(client.store, data)
    seen: dict[int, Any] = {}

    def target(inputs: dict[str, Any], attachments: dict[str, Any]) -> dict[str, Any]:
        seen[inputs["x"]] = attachments.get("h")
        return {}

    client.evaluate(target, data=data, experiment="handles")
    assert len(client.store.list_datasets()) == 1
    assert seen == dict(enumerate(handles))


def _stored_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


@pytest.mark.slow
def test_a_run_killed_over_a_store_written_before_resumes_on_its_ids(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with subprocess.Popen(
        [sys.executable, str(HERE / "_legacy_inline.py"), str(db)], stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None and child.stdout.readline() == "stored\n"
        deadline = time.monotonic() + 60  # a bound on a hang only: the kill comes at 30 rows
        while _stored_rows(db) < 30 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    assert child.returncode == -signal.SIGKILL
    client = Client(str(db))
    try:
        [record] = client.list_experiments()
        assert record.status == "running"
        before = client.store.completed_keys(record.id)
        assert 30 <= len(before) < len(legacy.DATA)
        calls: list[int] = []

        def counting(inputs: dict[str, Any]) -> dict[str, Any]:
            calls.append(inputs["x"])
            return {"y": 2 * inputs["x"]}

        rows = list(
            client.evaluate(counting, data=legacy.DATA, experiment="legacy", resume=True, max_concurrency=8)
        )
        digest = legacy.digest_of(legacy.DATA)
        old_ids = [legacy.legacy_id(digest, i) for i in range(len(legacy.DATA))]
        assert [row["example"].id for row in rows] == old_ids
        assert len(calls) == len(legacy.DATA) - len(before)  # only what was missing
        assert {str(legacy.legacy_id(digest, x)) for x in calls}.isdisjoint(key for key, _ in before)
        assert len(client.store.list_datasets()) == 1
    finally:
        client.close()


def _planted(client: Client, name: str, legacy_style: bool) -> None:
    """Other data stored under ``name``: what data made to match a dataset's name (48 bits
    of its digest) would find, as a dataset of today or of before content ids."""
    other = [{"inputs": {"x": "planted"}, "outputs": {"y": "wrong"}}]
    if legacy_style:
        legacy.store_as_before(client.store, other, name=name)
        return
    digest = legacy.digest_of(other)
    dataset = client.store.create_dataset(name, metadata={"content_sha256": digest})
    values = [(str(legacy.content_id(digest, 0)), other[0]["inputs"], other[0]["outputs"], None)]
    client.store.add_example_values(dataset.id, values)


@pytest.mark.parametrize("legacy_style", [False, True], ids=["today", "before"])
def test_other_data_under_the_contents_name_is_refused_not_run_on(client: Client, legacy_style: bool) -> None:
    data = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(5)]
    name = f"inline-{legacy.digest_of(data)[:12]}"
    _planted(client, name, legacy_style)
    calls: list[Any] = []
    with pytest.raises(DataError, match=rf"dataset '{name}' in .* holds other data than data="):
        client.evaluate(lambda inputs: calls.append(inputs) or {}, data=data, experiment="victim")
    assert calls == [] and client.list_experiments() == []


def test_an_edited_dataset_of_inline_data_is_still_found(client: Client) -> None:
    data = [{"inputs": {"x": i}} for i in range(3)]
    first = resolve_data(data, client.store)
    client.create_examples(inputs=[{"x": 99}], dataset_id=first.dataset.id)  # the user's edit
    again = resolve_data(data, client.store)
    assert again.dataset.id == first.dataset.id and again.count == 4
