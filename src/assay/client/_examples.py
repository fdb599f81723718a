"""``Client.create_examples``' input forms, streamed: one example at a time from lists,
iterables or generators, checked as it comes, so that a million examples cost the memory
of a page, not of a million records.

Every example is added in one dataset version, in one transaction: a bad item (or a
failing generator) midway raises an error naming its index and nothing is stored.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypedDict, cast

import pydantic

from assay._ids import new_id_text
from assay.errors import AttachmentError, ExampleInputError
from assay.schemas import Example, ExampleCreate
from assay.store.base import ExampleValues

# What an item of ``examples=`` may hold: LangSmith's ``ExampleCreate`` fields that a local
# store keeps (``outputs`` is its older name of ``reference_outputs``; ``split`` is kept
# where LangSmith keeps it, in ``metadata["dataset_split"]``).
_ITEM_FIELDS = frozenset(
    {"inputs", "outputs", "reference_outputs", "metadata", "id", "attachments", "split", "created_at"}
)
_COLUMNS = ("outputs", "metadata", "ids", "attachments")


#: where LangSmith keeps an example's split: ``metadata["dataset_split"]``
SPLIT_KEY = "dataset_split"


class UpsertExamplesResponse(TypedDict):
    """What LangSmith's ``create_examples`` returns: the new examples' ids (as text, in
    the order given) and their count. ``as_of`` is the dataset version they were added
    in (an int here, which ``list_examples(as_of=...)`` takes)."""

    example_ids: list[str]
    count: int
    as_of: int | None


def example_stream(
    dataset_id: uuid.UUID,
    columns: dict[str, Iterable[Any] | None],
    examples: Iterable[Any] | None,
    *,
    allow_files: bool,
    make: Callable[[uuid.UUID, dict[str, Any], str], Any] | None = None,
) -> Iterator[Example]:
    """The examples of either form, validated one by one. ``columns`` holds ``inputs``
    and the parallel ``outputs``, ``metadata`` and ``ids`` (each None when not given).
    ``allow_files``: whether an attachment may name a file (``refuse_files``). ``make``:
    what each item's fields become (``_example``: an ``Example``)."""
    make = make or _example
    inputs = columns.get("inputs")
    if examples is not None:
        given = [name for name, column in columns.items() if column is not None]
        if given:
            raise ExampleInputError(
                f"pass either examples= or inputs= (with outputs=/metadata=), not both ({given})"
            )
        stream = _from_items(dataset_id, examples, make)
    elif inputs is None:
        raise ExampleInputError("create_examples needs inputs=[...] or examples=[...]")
    else:
        _check_sized_lengths(columns)
        stream = _from_columns(dataset_id, columns, make)
    return stream if allow_files else _without_files(stream)


def refuse_files(attachments: Mapping[str, Any] | None, where: str) -> None:
    """LangSmith's guard (GHSA-f4xh-w4cj-qxq8), kept for examples as for runs: an attachment
    given as a file path is read only with ``dangerously_allow_filesystem=True``, because a
    path may come from data the caller did not write."""
    for name, value in (attachments or {}).items():
        content = value[1] if isinstance(value, (tuple, list)) and len(value) == 2 else value
        if isinstance(content, Mapping):
            content = content.get("data")
        if isinstance(content, Path):
            raise AttachmentError(
                f"{where}: attachment {name!r} names a file ({content}); pass its bytes, or "
                "dangerously_allow_filesystem=True to let assay read it"
            )


def _without_files(examples: Iterator[Example]) -> Iterator[Example]:
    for index, example in enumerate(examples):
        refuse_files(example.attachments, f"example {index}")
        yield example


def _check_sized_lengths(columns: dict[str, Iterable[Any] | None]) -> None:
    """Lists of different lengths fail before anything is read (generators, as they end)."""
    inputs = columns["inputs"]
    if not isinstance(inputs, Sized):
        return
    for name in _COLUMNS:
        column = columns.get(name)
        if isinstance(column, Sized) and len(column) != len(inputs):
            raise ExampleInputError(f"{name} has {len(column)} items but inputs has {len(inputs)}")


_END = object()


def _from_columns(
    dataset_id: uuid.UUID, columns: dict[str, Iterable[Any] | None], make: Callable[..., Any]
) -> Iterator[Example]:
    inputs = iter(columns["inputs"] or ())
    others = {name: iter(column) for name in _COLUMNS if (column := columns.get(name)) is not None}
    index = 0
    for item in inputs:
        fields: dict[str, Any] = {"inputs": item}
        for name, column in others.items():
            value = next(column, _END)
            if value is _END:
                raise ExampleInputError(
                    f"{name} ended after {index} items but inputs has more; nothing was stored"
                )
            fields[name] = value
        yield make(dataset_id, fields, f"inputs[{index}]")
        index += 1
    for name, column in others.items():
        if next(column, _END) is not _END:
            raise ExampleInputError(f"{name} has more items than inputs ({index}); nothing was stored")


def _from_items(dataset_id: uuid.UUID, items: Iterable[Any], make: Callable[..., Any]) -> Iterator[Example]:
    for index, item in enumerate(items):
        where = f"examples[{index}]"
        if isinstance(item, Example):
            item = {"inputs": item.inputs, "outputs": item.outputs, "metadata": item.metadata, "id": item.id,
                    "attachments": item.attachments, "created_at": item.created_at}  # fmt: skip
        elif isinstance(item, ExampleCreate):
            item = _fields_of(item)
        if not isinstance(item, dict):
            raise ExampleInputError(
                f"{where} is a {type(item).__name__}; each example must be a dict with 'inputs' "
                "(and optionally 'outputs', 'metadata', 'id'); nothing was stored"
            )
        unknown = set(item) - _ITEM_FIELDS
        if unknown or "inputs" not in item:
            raise ExampleInputError(
                f"{where} must have 'inputs' and only {sorted(_ITEM_FIELDS)}; got {sorted(item)}; "
                "nothing was stored"
            )
        if "reference_outputs" in item:
            if item.get("outputs") is not None:
                raise ExampleInputError(
                    f"{where} has both 'outputs' and 'reference_outputs'; nothing was stored"
                )
            item = {**item, "outputs": item["reference_outputs"]}
            del item["reference_outputs"]
        yield make(dataset_id, item, where)


def _fields_of(item: ExampleCreate) -> dict[str, Any]:
    fields = {"inputs": item.inputs or {}, "outputs": item.reference_outputs, "metadata": item.metadata,
              "id": item.id, "attachments": item.attachments, "split": item.split,
              "created_at": item.created_at}  # fmt: skip
    return {name: value for name, value in fields.items() if value is not None}


def _example(dataset_id: uuid.UUID, fields: dict[str, Any], where: str) -> Example:
    values = {name: value for name, value in fields.items() if name not in ("ids", "split")}
    values["metadata"] = with_split(values.get("metadata"), fields.get("split"))
    if fields.get("ids") is not None:
        values["id"] = fields["ids"]
    if values.get("id") is None:
        values.pop("id", None)
    try:
        example = Example(dataset_id=dataset_id, **values)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'value'}: {error['msg']}"
            for error in exc.errors()
        )
        raise ExampleInputError(f"{where} is not a valid example ({problems}); nothing was stored") from None
    example.created_at = created_at_of(example.created_at) or example.created_at
    return example


def example_values(
    dataset_id: uuid.UUID, columns: dict[str, Iterable[Any] | None], examples: Iterable[Any] | None
) -> Iterator[ExampleValues] | None:
    """``example_stream``'s examples as the store's plain values, when no example can hold
    a file (no ``attachments`` column; ``examples=`` a list of dicts none of which has
    attachments); None otherwise (``example_stream`` then). A plain item (dicts with
    text keys, no split, a UUID or canonical UUID text for its id) costs no record; any
    other goes through ``Example``'s validation, so errors and coercions are the same."""
    if columns.get("attachments") is not None:
        return None
    if examples is not None and not (
        isinstance(examples, list)
        and all(
            type(item) is dict and not item.get("attachments") and "created_at" not in item
            for item in examples
        )
    ):
        return None
    # No example holds a file: nothing for ``refuse_files`` to refuse.
    checked = example_stream(dataset_id, columns, examples, allow_files=True, make=_values_of)
    return cast(Iterator[ExampleValues], checked)


_PLAIN_FIELDS = frozenset({"inputs", "outputs", "metadata", "id", "ids"})


def _values_of(dataset_id: uuid.UUID, fields: dict[str, Any], where: str) -> ExampleValues:
    """What ``_example`` makes, as values (see ``example_values``)."""
    if fields.keys() <= _PLAIN_FIELDS:
        inputs, outputs, metadata = fields["inputs"], fields.get("outputs"), fields.get("metadata")
        given = fields.get("ids")
        id_ = _id_text(fields.get("id") if given is None else given)
        if (
            id_ is not None
            and _text_keyed(inputs)
            and _text_keyed_or_none(outputs)
            and _text_keyed_or_none(metadata)
        ):
            return id_, inputs, outputs, metadata
    example = _example(dataset_id, fields, where)
    return str(example.id), example.inputs, example.outputs, example.metadata


def _id_text(given: Any) -> str | None:
    """A new id's text, or the given id's canonical text; None: not plain (validation says)."""
    if given is None:
        return new_id_text()
    if type(given) is uuid.UUID:
        return str(given)
    if type(given) is str and len(given) == 36 and given[8] + given[13] + given[18] + given[23] == "----":
        try:  # the canonical layout only: other texts uuid.UUID takes, validation may not
            return str(uuid.UUID(given))
        except ValueError:
            return None
    return None


def _text_keyed(value: Any) -> bool:
    return type(value) is dict and all(type(key) is str for key in value)


def _text_keyed_or_none(value: Any) -> bool:
    return value is None or _text_keyed(value)


class IdsOf:
    """Passes examples through while keeping their ids' text, in order (36 characters an
    example: the response LangSmith gives, without keeping the examples themselves)."""

    def __init__(self, examples: Iterable[Example]) -> None:
        self._examples = examples
        self.ids: list[str] = []

    def __iter__(self) -> Iterator[Example]:
        keep = self.ids.append
        for example in self._examples:
            keep(str(example.id))
            yield example


class IdsOfValues:
    """``IdsOf`` for examples as plain values: their ids are already text."""

    def __init__(self, values: Iterable[ExampleValues]) -> None:
        self._values = values
        self.ids: list[str] = []

    def __iter__(self) -> Iterator[ExampleValues]:
        keep = self.ids.append
        for value in self._values:
            keep(value[0])
            yield value


def with_split(metadata: Mapping[str, Any] | None, split: str | Sequence[str] | None) -> Any:
    if split is None:
        return metadata
    if not isinstance(split, str) and not (
        isinstance(split, Sequence) and all(isinstance(name, str) for name in split)
    ):
        raise ExampleInputError(f"split= takes a split's name or a list of names; got {split!r}")
    return {**(metadata or {}), SPLIT_KEY: split if isinstance(split, str) else list(split)}


def created_at_of(value: Any) -> datetime | None:
    """A given creation time, aware: a naive one is taken as UTC (as LangSmith's server takes
    it), so every stored time has an offset."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise TypeError(f"created_at= takes a datetime; got {type(value).__name__} {value!r}")
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
