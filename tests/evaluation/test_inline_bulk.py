"""Inline data stored in bulk (no record per example, a page per statement) is stored,
named and read back exactly as before; and a finished run leaves its records where the
caller's collections do not walk them again."""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import uuid
from typing import Any

import pytest

from assay import Client, evaluate
from assay.errors import AlreadyExistsError
from assay.evaluation._data import resolve_data
from assay.schemas import Example
from assay.store.sqlite import _examples


def _old_digest(records: list[dict[str, Any]]) -> str:
    """The name's hash as it was made a record at a time: ``json.dumps`` of the list, an
    integer too long for ``str`` tagged as the store keeps it."""

    def tagged(value: Any) -> Any:
        if type(value) is int and not -(2**63) <= value < 2**64:
            return {"$int": ("-" if value < 0 else "") + format(abs(value), "x")}
        if isinstance(value, dict):
            return {k: tagged(v) for k, v in value.items()}
        return value

    parts = []
    for record in records:
        record = {k: v for k, v in record.items() if k != "attachments"}
        try:
            parts.append(json.dumps(record, sort_keys=True, default=str, ensure_ascii=True))
        except ValueError:
            parts.append(json.dumps(tagged(record), sort_keys=True, default=str, ensure_ascii=True))
    return hashlib.sha256(("[" + ", ".join(parts) + "]").encode()).hexdigest()


def test_pages_of_records_hash_as_the_whole_list(client: Client) -> None:
    """Several pages, a huge integer on the second, a date: the same name, hence the
    same dataset, as data stored by earlier versions (files' digests: test_attachments)."""
    records: list[dict[str, Any]] = [
        {"inputs": {"x": i, "é": "ü"}, "outputs": {"y": [i, 0.5]}} for i in range(2500)
    ]
    records[1500]["outputs"] = {"big": math.factorial(2000)}
    records[2100]["metadata"] = {"when": datetime.date(2026, 1, 2)}
    resolved = resolve_data(records, client.store)
    assert resolved.dataset.name == f"inline-{_old_digest(records)[:12]}"
    assert resolved.count == 2500
    stored = list(client.store.iter_examples(resolved.dataset.id))
    assert stored[1500].outputs == {"big": math.factorial(2000)} and stored[2100].metadata == {
        "when": "2026-01-02"
    }


def test_ids_repeated_across_pages_of_a_new_dataset_are_refused(client: Client, monkeypatch) -> None:
    """The dataset had no examples: ids are checked by a set across pages, then (past its
    limit) by the index; either names the second one's position, and nothing stays."""
    dataset = client.create_dataset("fresh")
    items = [Example(inputs={"x": i}) for i in range(4500)]
    items[4321] = Example(id=items[0].id, inputs={"x": -2})  # a later page than the first
    with pytest.raises(AlreadyExistsError, match=r"appears twice \(the second at position 4321\)"):
        client.store.add_examples(dataset.id, iter(items))
    monkeypatch.setattr(_examples, "SEEN_LIMIT", 3000)  # the set stops at the second page
    with pytest.raises(AlreadyExistsError, match=r"appears twice \(the second at position 4321\)"):
        client.store.add_examples(dataset.id, iter(items))
    assert client.store.count_examples(dataset.id) == 0
    with pytest.raises(AlreadyExistsError, match=r"appears twice \(the second at position 1\)"):
        evaluate(dict, data=[{"id": "a", "inputs": {}}, {"id": "a", "inputs": {}}], client=client)


ODD = [
    {
        "inputs": {"t": (1, 2), "s": {3}, "big": 2**70, "nan": math.nan, "neg": -0.0},
        "outputs": {"b": b"\x00"},
    },
    {
        "inputs": {"when": datetime.datetime(2026, 1, 2, 3, 4, 5), "id": uuid.UUID(int=5)},
        "metadata": {"m": [1]},
    },
    {"inputs": {"nested": {"$int": "not a tag"}, "keys": {1: "one"}}, "outputs": None},
    {"id": "my-own-id", "inputs": {"text": "\ud800 lone"}, "outputs": {}},
    {"q": "a flat record"},
]


def _same(a: Example, b: Example) -> None:
    assert (a.id, a.dataset_id, a.created_at) == (b.id, b.dataset_id, b.created_at)
    for part in ("inputs", "outputs", "metadata"):
        left, right = getattr(a, part), getattr(b, part)
        assert repr(left) == repr(right)  # types too: a tuple stays a tuple, nan is nan
        assert left is None or left is not right


@pytest.mark.parametrize("kept", [True, False])
def test_examples_fed_from_memory_are_the_stored_ones(client: Client, monkeypatch, kept: bool) -> None:
    """What a run is fed, whether held since storing it or (past the limit) read back,
    is what the store reads: fresh objects, odd values as the store gives them back."""
    if not kept:
        monkeypatch.setattr(_examples, "KEEP_LIMIT", 3)
    resolved = resolve_data(ODD, client.store)
    assert (resolved.kept is not None) is kept
    fed = list(resolved.examples(client.store))
    stored = list(client.store.iter_examples(resolved.dataset.id, version=resolved.version))
    assert len(fed) == len(stored) == len(ODD)
    for a, b in zip(fed, stored):
        _same(a, b)
    again = list(resolved.examples(client.store))  # a second read makes new objects
    assert again[0].inputs is not fed[0].inputs and again[0].inputs == fed[0].inputs


def test_a_run_over_inline_data_sees_what_a_resumed_one_would(client: Client) -> None:
    seen: list[Any] = []
    evaluate(lambda inputs: seen.append(inputs) or {}, data=ODD, client=client, max_concurrency=1)
    dataset = client.store.list_datasets()[0]
    assert [repr(s) for s in seen] == [repr(e.inputs) for e in client.store.iter_examples(dataset.id)]
