"""Attachments as LangSmith's Client and evaluate give them: created in LangSmith's shapes,
stored, read back with a reader each target and evaluator reads whole."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay import Client, evaluate
from assay.errors import AttachmentError, DataError, ExampleInputError
from assay.schemas import Attachment, Example, ExampleUpdate, ExampleUpsertWithAttachments

HERE = Path(__file__).parent


def contents(example: Example) -> dict[str, bytes]:
    return {name: a["reader"].read() for name, a in (example.attachments or {}).items()}


def test_create_examples_takes_langsmiths_shapes_and_a_path(client: Client, tmp_path: Path) -> None:
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(b"JPEG bytes")
    client.create_dataset("files")
    created = client.create_examples(
        dataset_name="files",
        examples=[
            {"inputs": {"i": 0}, "attachments": {"t": ("text/plain", b"tuple"), "p": ("image/jpeg", photo)}},
            {"inputs": {"i": 1}, "attachments": {"a": Attachment("audio/wav", b"RIFF")}, "split": "test"},
            {"inputs": {"i": 2}, "attachments": {"d": {"mime_type": "application/pdf", "data": b"%PDF"}}},
            {"inputs": {"i": 3}, "attachments": {"guessed": photo}},
        ],
        dangerously_allow_filesystem=True,
    )
    examples = [client.read_example(example_id) for example_id in created["example_ids"]]
    assert [contents(e) for e in examples] == [
        {"p": b"JPEG bytes", "t": b"tuple"},
        {"a": b"RIFF"},
        {"d": b"%PDF"},
        {"guessed": b"JPEG bytes"},
    ]
    assert examples[3].attachments["guessed"]["mime_type"] == "image/jpeg"
    assert examples[1].metadata == {"dataset_split": "test"}
    assert client.list_examples(dataset_name="files", splits=["test"])[0].id == examples[1].id


def test_create_example_returns_the_stored_example_with_its_files(client: Client) -> None:
    client.create_dataset("files")
    example = client.create_example({"q": "?"}, dataset_name="files", attachments={"f": ("text/plain", b"x")})
    assert contents(example) == {"f": b"x"}
    assert example.attachments["f"]["presigned_url"].startswith("data:text/plain;base64,")


def test_upsert_examples_multipart_adds_new_ids_and_replaces_stored_ones(client: Client) -> None:
    dataset = client.create_dataset("files")
    [kept] = client.create_examples(
        dataset_name="files", examples=[{"inputs": {"v": 1}, "attachments": {"old": ("text/plain", b"old")}}]
    )["example_ids"]
    response = client.upsert_examples_multipart(
        upserts=[
            ExampleUpsertWithAttachments(
                dataset_id=dataset.id, id=kept, inputs={"v": 2}, attachments={"new": ("text/plain", b"new")}
            ),
            ExampleUpsertWithAttachments(
                dataset_id=dataset.id, inputs={"v": 3}, attachments={"img": ("image/png", b"PNG")}
            ),
        ]
    )
    assert response["count"] == 2 and response["example_ids"][0] == kept
    by_inputs = {e.inputs["v"]: contents(e) for e in client.list_examples(dataset_name="files")}
    assert by_inputs == {2: {"new": b"new"}, 3: {"img": b"PNG"}}
    with pytest.raises(ExampleInputError, match=r"upserts\[0\].*dataset_id"):
        client.upsert_examples_multipart(upserts=[{"inputs": {"v": 4}}])


def test_update_examples_renames_retains_and_adds(client: Client) -> None:
    dataset = client.create_dataset("files")
    [first, second] = client.create_examples(
        dataset_name="files",
        examples=[
            {"inputs": {"i": 0}, "attachments": {"a": ("text/plain", b"A"), "b": ("text/plain", b"B")}},
            {"inputs": {"i": 1}, "attachments": {"c": ("text/plain", b"C")}},
        ],
    )["example_ids"]
    client.update_examples(
        dataset_id=dataset.id,
        updates=[
            ExampleUpdate(id=first, attachments_operations={"rename": {"a": "renamed"}, "retain": []}),
            {"id": second, "attachments": {"d": ("text/plain", b"D")}},
        ],
    )
    assert contents(client.read_example(first)) == {"renamed": b"A"}  # b neither retained nor renamed
    assert contents(client.read_example(second)) == {"c": b"C", "d": b"D"}
    client.update_examples(example_ids=[second], attachments_operations=[{"retain": ["d"]}])
    assert contents(client.read_example(second)) == {"d": b"D"}
    with pytest.raises(
        AttachmentError, match=r"name \['gone'\], which it does not have \(its attachments: \['d'\]\)"
    ):
        client.update_examples(
            example_ids=[first, second], attachments_operations=[None, {"retain": ["gone"]}]
        )
    assert contents(client.read_example(first)) == {"renamed": b"A"}  # checked before any change


def test_evaluate_hands_stored_files_whole_to_the_target_and_each_evaluator(client: Client) -> None:
    client.create_dataset("files")
    client.create_examples(
        dataset_name="files",
        examples=[
            {"inputs": {"q": i}, "attachments": {"f": ("text/plain", f"file {i}".encode())}} for i in range(3)
        ],
    )
    read: list[bytes] = []

    def target(inputs: dict, attachments: dict) -> dict:
        return {"text": attachments["f"]["reader"].read().decode()}

    def same_as_target(outputs: dict, attachments: dict) -> bool:
        return outputs["text"].encode() == attachments["f"]["reader"].read()

    def reads_again(attachments: dict) -> dict:
        read.append(attachments["f"]["reader"].read())
        return {"key": "size", "score": len(read[-1])}

    results = list(evaluate(target, data="files", evaluators=[same_as_target, reads_again], client=client))
    assert sorted(r["run"].outputs["text"] for r in results) == ["file 0", "file 1", "file 2"]
    assert all(r["evaluation_results"]["results"][0].score is True for r in results)
    assert sorted(read) == [b"file 0", b"file 1", b"file 2"]


def test_rescoring_an_experiment_reads_the_files_of_the_version_it_ran_on(client: Client) -> None:
    client.create_dataset("files")
    [example_id] = client.create_examples(
        dataset_name="files", examples=[{"inputs": {"q": 0}, "attachments": {"f": ("text/plain", b"then")}}]
    )["example_ids"]
    first = evaluate(lambda inputs: {"ok": True}, data="files", client=client)
    client.update_example(example_id, attachments={"f": ("text/plain", b"now")})

    def reads(attachments: dict) -> dict:
        return {"key": "text", "value": attachments["f"]["reader"].read().decode()}

    [row] = list(evaluate(first.experiment_name, evaluators=[reads], client=client))
    assert [r.value for r in row["evaluation_results"]["results"] if r.key == "text"] == ["then"]


def test_inline_readers_are_read_whole_by_the_target_and_then_each_evaluator(client: Client) -> None:
    """LangSmith gives an evaluator the bytes the target read already; assay gave b""."""
    example = Example(
        inputs={"q": 1}, attachments={"f": {"mime_type": "text/plain", "reader": io.BytesIO(b"hello")}}
    )

    def target(inputs: dict, attachments: dict) -> dict:
        return {"n": len(attachments["f"]["reader"].read())}

    def evaluator(outputs: dict, attachments: dict) -> bool:
        return outputs["n"] == len(attachments["f"]["reader"].read()) == 5

    [row] = list(
        evaluate(
            target, data=[example], evaluators=[evaluator, evaluator], client=client, upload_results=False
        )
    )
    assert row["run"].outputs == {"n": 5}
    assert [r.score for r in row["evaluation_results"]["results"]] == [True, True]


def test_inline_files_are_stored_with_the_data_and_name_it(client: Client) -> None:
    """Files given with ``data=[...]`` are stored with its dataset (a rescore reads them);
    other files make other data; what is not a file still reaches the run, unstored."""

    def size(inputs: dict, attachments: dict) -> dict:
        return {"kinds": sorted(type(value).__name__ for value in attachments.values())}

    made = {
        content: evaluate(
            size, data=[Example(inputs={"q": 1}, attachments={"f": ("text/plain", content)})], client=client
        )
        for content in (b"one", b"two")
    }
    assert len(client.list_datasets()) == 2  # same inputs, other files: other data
    for content, results in made.items():
        record = client.store.get_experiment(name=results.experiment_name)
        assert record is not None
        [row] = client.store.load_rows(record)
        assert row.example.attachments["f"]["reader"].read() == content
        assert results[0]["run"].outputs == {"kinds": ["tuple"]}  # the run got them as given

    results = evaluate(size, data=[Example(inputs={"q": 2}, attachments={"obj": object()})], client=client)
    assert results[0]["run"].outputs == {"kinds": ["object"]}
    record = client.store.get_experiment(name=results.experiment_name)
    assert record is not None
    assert client.store.load_rows(record)[0].example.attachments is None


def test_an_inline_file_over_the_limit_is_refused_before_any_row(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_MAX_ATTACHMENT_BYTES", "4")
    data = [Example(inputs={"q": 1}, attachments={"scan.png": ("image/png", b"12345")})]
    with pytest.raises(
        DataError, match=r"data\[0\] attachment 'scan.png' is 5 bytes.*ASSAY_MAX_ATTACHMENT_BYTES"
    ):
        evaluate(lambda inputs: {}, data=data, client=client)
    assert client.store.list_experiments() == [] and client.list_datasets() == []


def swapped(source: str) -> str:
    return re.sub(r"\blangsmith\b", "assay", source)


@pytest.mark.slow
def test_the_attachments_how_to_runs_with_only_the_import_swapped(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(swapped((HERE / "langsmith_attachments_script.py").read_text()))
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"ASSAY_DATABASE_URL": str(tmp_path / "store.db"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (HERE / "langsmith_attachments_expected.txt").read_text()


@pytest.fixture
def client(tmp_path: Path) -> Any:
    client = Client(str(tmp_path / "assay.db"))
    yield client
    client.close()
