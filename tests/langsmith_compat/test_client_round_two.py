"""LangSmith Client calls beyond the basics, on the local store: reading and editing
several examples, splits, filters, examples from runs/prompts/chats, projects, CSV
names, and the AsyncClient."""

from __future__ import annotations

import asyncio
import io
import uuid
from pathlib import Path

import pytest

from assay import AsyncClient, Client, evaluate
from assay.errors import NotFoundError


@pytest.fixture
def dataset(client: Client) -> uuid.UUID:
    created = client.create_dataset("qa")
    client.create_examples(
        dataset_id=created.id,
        examples=[
            {
                "inputs": {"q": "a"},
                "outputs": {"a": 1},
                "metadata": {"topic": "x", "dataset_split": ["train"]},
            },
            {"inputs": {"q": "b"}, "outputs": {"a": 2}, "metadata": {"topic": "y", "dataset_split": "test"}},
            {"inputs": {"q": "c"}, "outputs": {"a": 3}, "metadata": {"topic": "x"}},
        ],
    )
    return created.id


def test_read_update_and_delete_several_examples(client: Client, dataset: uuid.UUID) -> None:
    a, b, c = client.list_examples(dataset_id=dataset)
    assert client.read_example(a.id).inputs == {"q": "a"}
    client.update_examples(
        dataset_id=dataset,
        updates=[{"id": a.id, "outputs": {"a": 10}}, {"id": str(b.id), "metadata": {"topic": "z"}}],
    )
    assert client.read_example(a.id).outputs == {"a": 10}
    assert client.read_example(b.id).metadata == {"topic": "z"}
    client.update_examples(example_ids=[c.id], inputs=[{"q": "C"}], splits=["test"])
    assert client.read_example(c.id).inputs == {"q": "C"}
    with pytest.raises(NotFoundError):  # an unknown id: nothing deleted
        client.delete_examples([a.id, uuid.uuid4()])
    assert len(client.list_examples(dataset_id=dataset)) == 3
    client.delete_examples([a.id, b.id])
    assert [e.id for e in client.list_examples(dataset_id=dataset)] == [c.id]
    with pytest.raises(ValueError, match="updates\\[0\\] needs 'id'"):
        client.update_examples(updates=[{"inputs": {}}])


def test_splits_and_filters(client: Client, dataset: uuid.UUID) -> None:
    assert client.list_dataset_splits(dataset_id=dataset) == ["base", "test", "train"]
    assert [e.inputs["q"] for e in client.list_examples(dataset_id=dataset, splits=["test"])] == ["b"]
    assert [e.inputs["q"] for e in client.list_examples(dataset_id=dataset, metadata={"topic": "x"})] == [
        "a",
        "c",
    ]
    a, b, c = client.list_examples(dataset_id=dataset)
    assert client.list_examples(dataset_id=dataset, example_ids=[str(c.id)]) == [c]
    client.update_dataset_splits(dataset_id=dataset, split_name="test", example_ids=[a.id])
    assert {e.inputs["q"] for e in client.list_examples(dataset_id=dataset, splits=["test"])} == {"a", "b"}
    client.update_dataset_splits(dataset_id=dataset, split_name="test", example_ids=[b.id], remove=True)
    assert [e.inputs["q"] for e in client.list_examples(dataset_id=dataset, splits=["test"])] == ["a"]
    # An experiment on one split.
    results = evaluate(
        lambda inputs: {"a": 0},
        data=client.list_examples(dataset_id=dataset, splits=["train"]),
        client=client,
    )
    assert [row["example"].inputs["q"] for row in results] == ["a"]
    with pytest.raises(NotImplementedError, match="filter language"):
        client.list_examples(dataset_id=dataset, filter='eq(metadata.topic, "x")')


def test_examples_from_runs_prompts_and_chats(client: Client, dataset: uuid.UUID) -> None:
    results = evaluate(lambda inputs: {"answer": inputs["q"] * 2}, data="qa", client=client)
    run = next(iter(results))["run"]
    made = client.create_example_from_run(run, dataset_name="qa")
    assert (made.inputs, made.outputs) == (run.inputs, run.outputs)
    llm = client.create_llm_example("2+2?", "4", dataset_id=dataset)
    assert (llm.inputs, llm.outputs) == ({"input": "2+2?"}, {"output": "4"})
    chat = client.create_chat_example([{"role": "user", "content": "hi"}], {"role": "ai", "content": "yo"},
                                      dataset_id=dataset)  # fmt: skip
    assert chat.inputs == {"input": [{"role": "user", "content": "hi"}]}
    assert client.read_example(chat.id).outputs == {"output": {"role": "ai", "content": "yo"}}


def test_projects_and_csv_names(client: Client, tmp_path: Path) -> None:
    client.create_project("nightly", project_extra={"owner": "ci"})
    assert client.read_project(project_name="nightly").metadata["project_extra"] == {"owner": "ci"}
    assert client.has_project("nightly") and not client.has_project("weekly")
    client.delete_project(project_name="nightly")
    assert not client.has_project("nightly")
    uploaded = client.upload_csv(("test.csv", io.BytesIO(b"q,a\n1,2\n")), input_keys=["q"], output_keys=["a"])
    assert uploaded.name == "test.csv"  # LangSmith's name for an uploaded file


def test_the_async_client_shares_the_store(tmp_path: Path) -> None:
    async def main() -> list[str]:
        async with AsyncClient(str(tmp_path / "a.db")) as client:
            created = await client.create_dataset("async")
            await client.create_examples(dataset_id=created.id, inputs=[{"q": 1}, {"q": 2}])
            assert await client.has_dataset(dataset_name="async")
            return [str(example.inputs["q"]) async for example in client.list_examples(dataset_name="async")]

    assert asyncio.run(main()) == ["1", "2"]
    sync = Client(str(tmp_path / "a.db"))
    assert [e.inputs for e in sync.list_examples(dataset_name="async")] == [{"q": 1}, {"q": 2}]
    sync.close()
