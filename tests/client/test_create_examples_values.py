"""``Client.create_examples`` of examples without files goes to the store as plain values
(no ``Example`` validated per item): what is stored, answered and refused is the same as
through ``Example``'s validation, which every item that is not plain still takes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay import Client
from assay.client import _examples
from assay.errors import AlreadyExistsError, ExampleInputError


@pytest.fixture
def client(store_url: str) -> Iterator[Client]:
    made = Client(store_url)
    made.create_dataset("plain")
    made.create_dataset("validated")
    yield made
    made.close()


def _items() -> list[dict[str, Any]]:
    given_id = uuid.UUID("0b7e2a7c-7a37-4f77-9a1e-3c1a6d1f0e55")
    return [
        {"inputs": {"q": "1 + 1", "n": [1, 2.5, None]}, "outputs": {"a": 2}},
        {"inputs": {"q": "nan"}, "outputs": {"a": float("nan"), "t": (1, 2)}, "metadata": {"m": True}},
        {"inputs": {"big": 2**70}, "outputs": None, "id": given_id},
        {"inputs": {}, "id": str(uuid.UUID("5c0fd8b5-3a3e-4c4e-8a3e-9f1b2c3d4e5f")).upper()},
        {"inputs": {"x": 1}, "reference_outputs": {"y": 2}},  # LangSmith's newer name
        {"inputs": {"x": 2}, "split": "test", "metadata": {"k": "v"}},  # kept in metadata
    ]


def _stored(client: Client, name: str) -> list[tuple[Any, ...]]:
    return [(e.inputs, e.outputs, e.metadata) for e in client.list_examples(dataset_name=name)]


def test_plain_items_are_stored_as_validated_ones_are(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list of dicts takes the values path; a generator of the same dicts takes
    ``Example``'s validation: the same examples, ids as given (canonical text)."""
    validated = client.create_examples(examples=iter(_items()), dataset_name="validated")
    plain = client.create_examples(examples=_items(), dataset_name="plain")
    assert _stored(client, "plain") == _stored(client, "validated")
    assert plain["count"] == validated["count"] == 6 and plain["as_of"] == validated["as_of"]
    assert plain["example_ids"][2:4] == validated["example_ids"][2:4]  # given: the same
    assert plain["example_ids"][3] == "5c0fd8b5-3a3e-4c4e-8a3e-9f1b2c3d4e5f"
    stored = client.list_examples(dataset_name="plain")
    assert [str(e.id) for e in stored] == plain["example_ids"]
    assert stored[4].outputs == {"y": 2} and stored[5].metadata == {"k": "v", "dataset_split": "test"}


def test_plain_items_make_no_example_record(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """The claim the speed rests on: a plain item is not validated into an ``Example``
    (only the one that is not plain is: a split, kept in its metadata)."""
    made = []
    validate = _examples._example
    monkeypatch.setattr(_examples, "_example", lambda *args: made.append(args) or validate(*args))
    client.create_examples(
        examples=[{"inputs": {"x": i}, "outputs": {"y": i}} for i in range(50)], dataset_name="plain"
    )
    client.create_examples(inputs=[{"x": i} for i in range(50)], dataset_name="plain")
    assert made == []
    client.create_examples(examples=_items(), dataset_name="plain")
    assert len(made) == 1


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (
            {"inputs": {1: "a key that is not text"}},
            r"examples\[2100\] is not a valid example \(inputs\.1\.\[key\]",
        ),
        ({"inputs": {}, "outputs": [1]}, r"examples\[2100\] is not a valid example \(outputs: "),
        ({"inputs": {}, "metadata": "m"}, r"examples\[2100\] is not a valid example \(metadata: "),
        (
            {"inputs": {}, "id": "not-a-uuid-but-thirty-six-characters"},
            r"examples\[2100\] is not a valid example \(id: ",
        ),
        # 36 characters uuid.UUID takes (it drops every hyphen) and validation refuses
        (
            {"inputs": {}, "id": "12345678123412341234123456781234----"},
            r"examples\[2100\] is not a valid example \(id: ",
        ),
        (
            {"inputs": {}, "id": "1234567-81234-1234-1234-123456781234"},
            r"examples\[2100\] is not a valid example \(id: ",
        ),
    ],
)
def test_a_bad_item_in_a_list_is_refused_as_validation_refuses_it(
    client: Client, bad: Any, says: str
) -> None:
    items: list[Any] = [{"inputs": {"x": i}} for i in range(2500)]
    items[2100] = bad  # on the second page: the first is already in the transaction
    with pytest.raises(ExampleInputError, match=says + ".*nothing was stored"):
        client.create_examples(examples=items, dataset_name="plain")
    with pytest.raises(ExampleInputError, match=says):
        client.create_examples(examples=iter(items), dataset_name="validated")
    assert client.read_dataset(dataset_name="plain").example_count == 0


def test_a_repeated_or_stored_id_is_refused(client: Client) -> None:
    given_id = str(uuid.uuid4())
    items = [{"inputs": {"x": i}} for i in range(3000)]
    items[5]["id"] = items[2900]["id"] = given_id
    with pytest.raises(AlreadyExistsError, match=r"appears twice \(the second at position 2900\)"):
        client.create_examples(examples=items, dataset_name="plain")
    client.create_examples(inputs=[{"x": 0}], ids=[given_id], dataset_name="plain")
    with pytest.raises(AlreadyExistsError, match="already has an example with id"):
        client.create_examples(examples=[{"inputs": {}, "id": given_id}], dataset_name="plain")
    assert client.read_dataset(dataset_name="plain").example_count == 1


def test_files_still_take_the_validated_path(client: Client) -> None:
    response = client.create_examples(
        examples=[{"inputs": {"x": 1}}, {"inputs": {"x": 2}, "attachments": {"a": ("text/plain", b"hi")}}],
        dataset_name="plain",
    )
    stored = client.list_examples(dataset_name="plain")
    assert response["count"] == 2 and stored[1].attachments is not None
    assert stored[1].attachments["a"]["reader"].read() == b"hi"


@given(st.integers(min_value=0, max_value=5))
def test_a_new_id_text_is_a_version_7_uuid(_: int) -> None:
    from assay._ids import new_id_text

    text = new_id_text()
    made = uuid.UUID(text)
    assert str(made) == text and made.version == 7 and made.variant == uuid.RFC_4122
