"""Inline data's import shortcuts keep what the long way gives: records taken without a
copy are the ones ``_coerce`` would make, ids are the content's,
and the dataset handed back without a re-read is the one the store holds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay import Client
from assay.errors import DataError
from assay.evaluation import _data
from assay.evaluation._data import resolve_data

from ._legacy_inline import content_id

_parts = st.one_of(
    st.none(),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.integers(),
    st.text(max_size=3),
)
_items = st.one_of(
    st.dictionaries(
        st.sampled_from(["inputs", "outputs", "metadata", "id", "attachments", "other"]), _parts, max_size=5
    ),
    st.integers(),
    st.lists(st.integers(), max_size=2),
)


@given(_items)
def test_a_record_taken_as_it_is_is_what_coerce_makes(item: Any) -> None:
    """Every item ``_plain_record`` lets through unchanged, ``_coerce`` accepts and
    returns equal; every other still goes through ``_coerce`` (its errors)."""
    if _data._plain_record(item):
        assert _data._coerce(item, "data[0]") == item


@pytest.fixture
def client(store_url: str) -> Iterator[Client]:
    made = Client(store_url)
    yield made
    made.close()


def test_the_dataset_just_stored_is_the_one_the_store_reads(client: Client) -> None:
    data = [{"inputs": {"x": i}, "outputs": {"y": -i}} for i in range(2500)]
    resolved = resolve_data(data, client.store)
    stored = client.store.get_dataset(id=resolved.dataset.id)
    assert resolved.dataset == stored and resolved.count == stored.example_count == 2500
    assert resolved.version == stored.version == 1
    assert resolve_data(data, client.store).dataset == stored  # found by its content's name
    digest = _data._digest(iter(data))[0]  # ids: the content's digest, then the position
    ids = [content_id(digest, i) for i in range(2500)]
    assert [e.id for e in resolved.examples(client.store)] == ids
    assert [e.id for e in client.store.iter_examples(resolved.dataset.id)] == ids


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({"inputs": {"x": 1}, "outputs": [2]}, r"data\[7\]: 'outputs' must be an object, got list"),
        ({"inputs": 3}, r"data\[7\]: 'inputs' must be an object"),
        ({"inputs": {}, "extra": 1}, r"data\[7\]: unknown example fields \['extra'\]"),
        ("text", r"data\[7\]: expected an Example or a dict, got str"),
    ],
)
def test_a_bad_record_is_named_and_nothing_is_stored(client: Client, bad: Any, says: str) -> None:
    data: list[Any] = [{"inputs": {"x": i}} for i in range(10)]
    data[7] = bad
    with pytest.raises(DataError, match=says):
        resolve_data(data, client.store)
    assert client.store.list_datasets() == []
