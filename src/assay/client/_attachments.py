"""LangSmith's multipart example calls on the local store, and what an update does with
an example's stored attachments (``attachments`` added, ``attachments_operations``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pydantic

from assay.client._examples import UpsertExamplesResponse, example_stream
from assay.errors import AttachmentError, ExampleInputError
from assay.schemas import (
    AttachmentsOperations,
    Example,
    ExampleCreate,
    ExampleUpsertWithAttachments,
)

if TYPE_CHECKING:
    from assay.client._example_edits import ExampleEdits

__all__ = ["attachments_after", "upsert_examples"]


def upsert_examples(
    client: ExampleEdits, upserts: Sequence[ExampleCreate | Mapping[str, Any]], *, allow_files: bool
) -> UpsertExamplesResponse:
    """``Client.upsert_examples_multipart``: add each example to its ``dataset_id``, or,
    when its id is stored already, make the stored example what is given. ``as_of`` is
    the dataset version last written (of the last dataset, when there are several)."""
    store = client.store
    items = [_upsert(item, index) for index, item in enumerate(upserts)]
    ids: list[str] = []
    as_of: int | None = None
    for dataset_id, group in _by_dataset(items).items():
        client.read_dataset(dataset_id=dataset_id)
        stored = {_id_of(item) for item in group if store.get_example(_id_of(item)) is not None}
        for item in group:
            if _id_of(item) in stored:
                as_of = store.update_example(_replacement(dataset_id, item, allow_files))
        new = [item for item in group if _id_of(item) not in stored]
        if new:
            as_of = store.add_examples(
                dataset_id, example_stream(dataset_id, {}, new, allow_files=allow_files)
            )
        ids += [str(_id_of(item)) for item in group]
    return UpsertExamplesResponse(example_ids=ids, count=len(ids), as_of=as_of)


def attachments_after(example: Example, added: Mapping[str, Any] | None, operations: Any) -> dict[str, Any]:
    """The files an edited example keeps: with ``operations``, those it retains and those
    it renames (any other is dropped); without, all it had. ``added`` files join them,
    replacing any of the same name."""
    stored = dict(example.attachments or {})
    if operations is None:
        kept = stored
    else:
        ops = _operations(operations)
        unknown = sorted((set(ops.retain) | set(ops.rename)) - set(stored))
        if unknown:
            raise AttachmentError(
                f"example {example.id}: attachments_operations name {unknown}, which it does not "
                f"have (its attachments: {sorted(stored) or 'none'})"
            )
        kept = {name: stored[name] for name in ops.retain}
        kept.update({new: stored[old] for old, new in ops.rename.items()})
    return {**kept, **(added or {})}


def _operations(value: Any) -> AttachmentsOperations:
    if isinstance(value, AttachmentsOperations):
        return value
    if isinstance(value, Mapping):
        return AttachmentsOperations.model_validate(dict(value))
    # LangSmith's own AttachmentsOperations, or any object with its two fields
    return AttachmentsOperations(
        rename=dict(getattr(value, "rename", {})), retain=list(getattr(value, "retain", []))
    )


def _upsert(item: ExampleCreate | Mapping[str, Any], index: int) -> ExampleUpsertWithAttachments:
    if isinstance(item, ExampleUpsertWithAttachments):
        made = item
    elif isinstance(item, Mapping):
        try:
            made = ExampleUpsertWithAttachments.model_validate(dict(item))
        except pydantic.ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise ExampleInputError(
                f"upserts[{index}] is not an example ({problems}); nothing was stored"
            ) from None
    else:
        raise ExampleInputError(
            f"upserts[{index}] is a {type(item).__name__}; give ExampleUpsertWithAttachments(dataset_id=..., "
            "inputs=..., attachments=...) or a dict of its fields; nothing was stored"
        )
    return made if made.id is not None else made.model_copy(update={"id": uuid.uuid4()})


def _id_of(item: ExampleCreate) -> uuid.UUID:
    assert item.id is not None
    return item.id


def _by_dataset(
    items: Iterable[ExampleUpsertWithAttachments],
) -> dict[uuid.UUID, list[ExampleUpsertWithAttachments]]:
    groups: dict[uuid.UUID, list[ExampleUpsertWithAttachments]] = {}
    for item in items:
        groups.setdefault(item.dataset_id, []).append(item)
    return groups


def _replacement(dataset_id: uuid.UUID, item: ExampleCreate, allow_files: bool) -> Example:
    [example] = list(example_stream(dataset_id, {}, [item], allow_files=allow_files))
    example.attachments = example.attachments or {}  # what is given: no files means none
    return example
