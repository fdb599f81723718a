"""A script that creates its dataset can be run twice: a taken name says how to reuse it,
and ``exists_ok=True`` reuses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import Client, evaluate
from assay.errors import AlreadyExistsError


def test_a_taken_name_says_how_to_reuse_it_and_changes_nothing(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "assay.db"))
    first = client.create_dataset("qa", description="the first")
    client.create_examples(inputs=[{"q": "1"}], outputs=[{"a": "1"}], dataset_name="qa")
    with pytest.raises(AlreadyExistsError) as caught:
        client.create_dataset("qa", description="the second")
    said = str(caught.value)
    assert f"a dataset named 'qa' already exists in {client.store.url}" in said
    for way in ("read_dataset(dataset_name='qa')", "exists_ok=True", "delete_dataset(dataset_name='qa')"):
        assert way in said
    kept = client.read_dataset(dataset_name="qa")
    assert (kept.id, kept.description) == (first.id, "the first")
    assert len(list(client.list_examples(dataset_name="qa"))) == 1


def test_exists_ok_returns_the_stored_dataset_as_it_is(tmp_path: Path) -> None:
    for run in range(2):  # the same script, run twice
        client = Client(str(tmp_path / "assay.db"))
        dataset = client.create_dataset("qa", description=f"run {run}", exists_ok=True)
        if not any(True for _ in client.list_examples(dataset_id=dataset.id)):
            client.create_examples(inputs=[{"q": "1"}], outputs=[{"a": "1"}], dataset_id=dataset.id)
        results = evaluate(lambda inputs: {"a": inputs["q"]}, data="qa", client=client)
        assert len(results) == 1
        client.close()
    client = Client(str(tmp_path / "assay.db"))
    assert [d.description for d in client.list_datasets()] == ["run 0"]
    assert len(client.list_experiments()) == 2
