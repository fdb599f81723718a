"""A file path among an example's attachments is read only when the caller says
``dangerously_allow_filesystem=True``: LangSmith's guard for examples and runs alike
(GHSA-f4xh-w4cj-qxq8; a path may come from data the caller did not write). Every way of
adding or editing an example refuses one otherwise, naming the attachment, and stores
nothing; with the flag the file's bytes are stored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay import Client
from assay.errors import AttachmentError

SECRET = b"what a path in data could make us read"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_bytes(SECRET)
    return path


def _stored_files(client: Client) -> list[dict[str, Any]]:
    return [dict(example.attachments or {}) for example in client.list_examples(dataset_name="d")]


WAYS: dict[str, Callable[[Client, Any, bool], object]] = {
    "create_example": lambda c, f, allow: c.create_example(
        {"q": 1}, dataset_name="d", attachments={"f": f}, dangerously_allow_filesystem=allow
    ),
    "create_examples columns": lambda c, f, allow: c.create_examples(
        inputs=[{"q": 1}], attachments=[{"f": f}], dataset_name="d", dangerously_allow_filesystem=allow
    ),
    "create_examples items": lambda c, f, allow: c.create_examples(
        examples=[{"inputs": {"q": 1}, "attachments": {"f": f}}],
        dataset_name="d",
        dangerously_allow_filesystem=allow,
    ),
    "upload_examples_multipart": lambda c, f, allow: c.upload_examples_multipart(
        dataset_id=c.read_dataset(dataset_name="d").id,
        uploads=[{"inputs": {"q": 1}, "attachments": {"f": f}}],
        dangerously_allow_filesystem=allow,
    ),
    "upsert_examples_multipart": lambda c, f, allow: c.upsert_examples_multipart(
        upserts=[
            {"dataset_id": c.read_dataset(dataset_name="d").id, "inputs": {"q": 1}, "attachments": {"f": f}}
        ],
        dangerously_allow_filesystem=allow,
    ),
}

EDITS: dict[str, Callable[[Client, Any, Any, bool], object]] = {
    "update_example": lambda c, e, f, allow: c.update_example(
        e, attachments={"f": f}, dangerously_allow_filesystem=allow
    ),
    "update_examples": lambda c, e, f, allow: c.update_examples(
        updates=[{"id": e, "attachments": {"f": f}}], dangerously_allow_filesystem=allow
    ),
    "update_examples_multipart": lambda c, e, f, allow: c.update_examples_multipart(
        dataset_id=c.read_dataset(dataset_name="d").id,
        updates=[{"id": e, "attachments": {"f": f}}],
        dangerously_allow_filesystem=allow,
    ),
}

SHAPES: dict[str, Callable[[Path], Any]] = {
    "path": lambda p: p,
    "(type, path)": lambda p: ("text/plain", p),
    "{mime_type, data}": lambda p: {"mime_type": "text/plain", "data": p},
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("way", WAYS)
def test_adding_an_example_reads_a_path_only_when_allowed(way: str, shape: str, secret: Path) -> None:
    client = Client("sqlite://")
    client.create_dataset("d")
    with pytest.raises(
        AttachmentError, match=r"attachment 'f' names a file .*dangerously_allow_filesystem=True"
    ):
        WAYS[way](client, SHAPES[shape](secret), False)
    assert _stored_files(client) == []
    WAYS[way](client, SHAPES[shape](secret), True)
    [files] = _stored_files(client)
    assert files["f"]["reader"].read() == SECRET


@pytest.mark.parametrize("way", EDITS)
def test_editing_an_example_reads_a_path_only_when_allowed(way: str, secret: Path) -> None:
    client = Client("sqlite://")
    client.create_dataset("d")
    example = client.create_example({"q": 1}, dataset_name="d", attachments={"f": ("text/plain", b"before")})
    with pytest.raises(AttachmentError, match="attachment 'f' names a file"):
        EDITS[way](client, example.id, secret, False)
    [files] = _stored_files(client)
    assert files["f"]["reader"].read() == b"before"
    EDITS[way](client, example.id, ("text/plain", secret), True)
    [files] = _stored_files(client)
    assert files["f"]["reader"].read() == SECRET
