"""``Client.create_examples``: LangSmith's response, streamed input, and nothing stored
when an item midway is bad."""

from __future__ import annotations

import tracemalloc
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from assay import Client
from assay.client._examples import ExampleInputError


@pytest.fixture
def client(tmp_path: Any) -> Iterator[Client]:
    made = Client(str(tmp_path / "examples.db"))
    made.create_dataset("d")
    yield made
    made.close()


def test_the_response_is_langsmiths_ids_count_and_version(client: Client) -> None:
    given = uuid.uuid4()
    response = client.create_examples(
        examples=[{"inputs": {"q": 1}, "reference_outputs": {"a": 2}}, {"inputs": {"q": 2}, "id": given}],
        dataset_name="d",
    )
    assert set(response) == {"example_ids", "count", "as_of"}  # langsmith.schemas.UpsertExamplesResponse
    stored = client.list_examples(dataset_name="d")
    assert response["example_ids"] == [str(e.id) for e in stored] and response["count"] == 2
    assert all(type(i) is str for i in response["example_ids"]) and stored[1].id == given
    assert stored[0].outputs == {"a": 2}
    assert client.list_examples(dataset_name="d", as_of=response["as_of"]) == stored
    more = client.create_examples(inputs=[{"q": 3}], reference_outputs=[{"a": 6}], dataset_name="d")
    assert more["as_of"] == response["as_of"] + 1 and more["count"] == 1


def test_generators_stream_in_order_with_their_ids(client: Client) -> None:
    ids = [uuid.uuid4() for _ in range(5)]
    response = client.create_examples(
        inputs=({"x": i} for i in range(5)),
        outputs=({"y": 2 * i} for i in range(5)),
        metadata=iter([None, {"m": 1}, None, None, None]),
        ids=(str(i) for i in ids),
        dataset_name="d",
    )
    stored = client.list_examples(dataset_name="d")
    assert [e.inputs["x"] for e in stored] == list(range(5))
    assert [e.outputs for e in stored] == [{"y": 2 * i} for i in range(5)]
    assert stored[1].metadata == {"m": 1} and [e.id for e in stored] == ids
    assert response["example_ids"] == [str(i) for i in ids]


def _bad_at(index: int, n: int, bad: Any) -> Iterator[Any]:
    for i in range(n):
        yield bad if i == index else {"inputs": {"x": i}}


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({"inputs": "not a dict"}, r"examples\[3\] is not a valid example \(inputs: "),
        ({"input": {}}, r"examples\[3\] must have 'inputs'"),
        (["inputs"], r"examples\[3\] is a list"),
        ({"inputs": {}, "id": "not-a-uuid"}, r"examples\[3\] is not a valid example \(id: "),
    ],
)
def test_a_bad_item_midway_names_its_index_and_nothing_is_stored(client: Client, bad: Any, says: str) -> None:
    # 2,500 items: the bad one comes after a first page was already written in the transaction.
    with pytest.raises(ExampleInputError, match=says + ".*nothing was stored"):
        client.create_examples(examples=_bad_at(3, 2_500, bad), dataset_name="d")
    assert client.list_examples(dataset_name="d") == []
    with pytest.raises(ExampleInputError, match=r"examples\[2400\]"):
        client.create_examples(examples=_bad_at(2_400, 2_500, bad), dataset_name="d")
    assert client.list_examples(dataset_name="d") == []
    assert client.read_dataset(dataset_name="d").example_count == 0


def test_a_failing_generator_stores_nothing(client: Client) -> None:
    def broken() -> Iterator[dict[str, Any]]:
        for i in range(3_000):
            yield {"x": i}
        raise OSError("the source file went away")

    with pytest.raises(OSError, match="went away"):
        client.create_examples(inputs=broken(), dataset_name="d")
    assert client.list_examples(dataset_name="d") == []


def test_columns_of_different_lengths(client: Client) -> None:
    with pytest.raises(ValueError, match="outputs has 1 items but inputs has 2"):
        client.create_examples(inputs=[{}, {}], outputs=[{}], dataset_name="d")
    with pytest.raises(ExampleInputError, match="outputs ended after 1 items but inputs has more"):
        client.create_examples(inputs=iter([{}, {}]), outputs=iter([{}]), dataset_name="d")
    with pytest.raises(ExampleInputError, match=r"metadata has more items than inputs \(1\)"):
        client.create_examples(inputs=iter([{}]), metadata=iter([None, None]), dataset_name="d")
    with pytest.raises(ExampleInputError, match=r"inputs\[1\] is not a valid example"):
        client.create_examples(inputs=[{}, 5], dataset_name="d")
    with pytest.raises(ValueError, match="not both"):
        client.create_examples(inputs=[{}], outputs=[{}], reference_outputs=[{}], dataset_name="d")
    assert client.list_examples(dataset_name="d") == []


def test_memory_stays_a_page_however_many_examples(client: Client) -> None:
    def peak_of(n: int) -> int:
        tracemalloc.start()
        try:
            client.create_examples(
                inputs=({"x": i, "q": "question " * 4} for i in range(n)), dataset_name="d"
            )
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak_of(4_000), peak_of(24_000)
    # Held as records, 20,000 more examples would cost ~30 MB (~1,500 bytes each);
    # streamed, only their ids grow: as text in the response (~90 bytes each) and in the
    # duplicate check's dict (~190 bytes each, up to SEEN_LIMIT ids; the index beyond).
    assert large - small < 20_000 * 400, (small, large)
    assert client.read_dataset(dataset_name="d").example_count == 28_000
