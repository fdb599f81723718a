"""LangSmith's example calls beyond create and list: reading one, editing or deleting
several, splits (kept where LangSmith keeps them, ``metadata["dataset_split"]``), and
examples made from a run, a prompt or a chat.

Each edit is a new dataset version, as ``update_example`` is: experiments keep what they
ran on.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assay.client._examples import SPLIT_KEY, IdsOf, UpsertExamplesResponse, example_stream, refuse_files
from assay.client._projects import ID, as_uuid
from assay.errors import NotFoundError
from assay.schemas import Dataset, Example, ExampleCreate, ExampleUpdate

if TYPE_CHECKING:
    from assay.schemas import Dataset, Run
    from assay.store import Store

_UPDATE_FIELDS = frozenset(
    {"id", "inputs", "outputs", "metadata", "split", "dataset_id", "attachments", "attachments_operations"}
)


class ExampleEdits:
    """Mixed into ``Client`` (whose ``read_dataset`` and ``create_example`` these use)."""

    store: Store

    if TYPE_CHECKING:

        def read_dataset(self, *, dataset_name: str | None = None, dataset_id: Any = None) -> Dataset: ...

        def create_example(
            self,
            inputs: Any = None,
            dataset_id: Any = None,
            dataset_name: str | None = None,
            created_at: Any = None,
            *,
            outputs: Any = None,
            source_run_id: Any = None,
        ) -> Example: ...

    def update_dataset_tag(
        self,
        *,
        dataset_id: ID | None = None,
        dataset_name: str | None = None,
        as_of: int | str,
        tag: str,
    ) -> None:
        """Name a version of the dataset (``as_of``: its number, ``"latest"`` or another tag),
        so ``list_examples(as_of=tag)`` reads it; setting a tag again moves it."""
        dataset = self.read_dataset(dataset_id=dataset_id, dataset_name=dataset_name)
        if not isinstance(tag, str) or not tag or tag == "latest":
            raise ValueError(f"tag= must be a non-empty name other than 'latest', got {tag!r}")
        version = version_of(dataset, as_of)
        tags = {**_tags_of(dataset), tag: dataset.version if version is None else version}
        self.store.set_metadata_field("datasets", dataset.id, VERSION_TAGS, tags)

    def read_example(self, example_id: ID, *, as_of: Any = None) -> Example:
        """One example as it is now, or as it was in the version ``as_of`` names (see
        ``list_examples``), its files included."""
        wanted = as_uuid(example_id, "example_id")
        found = self.store.get_example(wanted)
        if found is None:
            raise NotFoundError(f"no example with id {example_id} in {self.store.url}")
        if as_of is None or as_of == "latest":
            return found
        assert found.dataset_id is not None
        dataset = self.read_dataset(dataset_id=found.dataset_id)
        version = version_of(dataset, as_of)
        then = next(
            (e for e in self.store.iter_examples(dataset.id, version=version) if e.id == wanted), None
        )
        if then is None:
            raise NotFoundError(
                f"example {example_id} is not in version {version} of dataset {dataset.name!r}"
            )
        return then

    def update_examples(
        self,
        *,
        dataset_id: ID | None = None,
        updates: Sequence[Mapping[str, Any] | ExampleUpdate] | None = None,
        example_ids: Sequence[ID] | None = None,
        inputs: Sequence[dict[str, Any] | None] | None = None,
        outputs: Sequence[dict[str, Any] | None] | None = None,
        metadata: Sequence[dict[str, Any] | None] | None = None,
        splits: Sequence[str | list[str] | None] | None = None,
        attachments: Sequence[dict[str, Any] | None] | None = None,
        attachments_operations: Sequence[Any] | None = None,
        dangerously_allow_filesystem: bool = False,
        **ignored: Any,
    ) -> dict[str, Any]:
        """Edit several examples: ``updates=[{"id", "inputs", "outputs", "metadata",
        "split", "attachments", "attachments_operations"}]`` (or ``ExampleUpdate``s), or
        parallel ``example_ids``/``inputs``/``outputs``/``metadata``/``splits``/
        ``attachments``/``attachments_operations``. Files: ``attachments`` adds (or
        replaces, by name); ``attachments_operations={"retain": [...], "rename": {old:
        new}}`` keeps only those named; a file path is read only with
        ``dangerously_allow_filesystem=True``. Every id is checked before anything changes.
        Returns ``{"message", "count"}``."""
        columns = {"inputs": inputs, "outputs": outputs, "metadata": metadata, "split": splits,
                   "attachments": attachments, "attachments_operations": attachments_operations}  # fmt: skip
        given = None if updates is None else [_update_fields(update) for update in updates]
        changes = _updates(given, example_ids, columns)
        if not dangerously_allow_filesystem:
            for index, change in enumerate(changes):
                refuse_files(change.get("attachments"), f"update {index} (example {change['id']})")
        current = [self.read_example(change["id"]) for change in changes]
        edited = [_edited(example, change) for example, change in zip(current, changes, strict=True)]
        for example in edited:
            self.store.update_example(example)
        return {"message": f"{len(changes)} examples updated", "count": len(changes)}

    def upsert_examples_multipart(
        self, *, upserts: Sequence[ExampleCreate | Mapping[str, Any]] | None = None,
        dangerously_allow_filesystem: bool = False,
    ) -> UpsertExamplesResponse:  # fmt: skip
        """Add each example (``ExampleUpsertWithAttachments``) to its ``dataset_id``, or,
        when its id is stored already, make the stored example what is given (inputs,
        outputs, metadata and files) in a new dataset version. A file path is read only
        with ``dangerously_allow_filesystem=True``."""
        from assay.client._attachments import upsert_examples

        return upsert_examples(self, list(upserts or ()), allow_files=dangerously_allow_filesystem)

    def upload_examples_multipart(
        self, *, dataset_id: ID, uploads: Sequence[ExampleCreate | Mapping[str, Any]] | None = None,
        dangerously_allow_filesystem: bool = False,
    ) -> UpsertExamplesResponse:  # fmt: skip
        """LangSmith's older name of ``create_examples(dataset_id=, examples=)``."""
        dataset = self.read_dataset(dataset_id=dataset_id)
        uploaded = list(uploads or ())
        created = IdsOf(example_stream(dataset.id, {}, uploaded, allow_files=dangerously_allow_filesystem))
        version = self.store.add_examples(dataset.id, created)
        count = len(created.ids)
        return UpsertExamplesResponse(example_ids=created.ids, count=count, as_of=version if count else None)

    def update_examples_multipart(
        self, *, dataset_id: ID, updates: Sequence[ExampleUpdate | Mapping[str, Any]] | None = None,
        dangerously_allow_filesystem: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        """LangSmith's older name of ``update_examples(dataset_id=, updates=)``."""
        return self.update_examples(
            dataset_id=dataset_id,
            updates=list(updates or ()),
            dangerously_allow_filesystem=dangerously_allow_filesystem,
        )

    def delete_examples(self, example_ids: Sequence[ID]) -> None:
        """Delete several examples (each id is checked first: an unknown one deletes none)."""
        ids = [self.read_example(example_id).id for example_id in example_ids]
        for example_id in ids:
            self.store.delete_example(example_id)

    def list_dataset_splits(self, *, dataset_id: ID | None = None, dataset_name: str | None = None,
                            as_of: Any = None) -> list[str]:  # fmt: skip
        """The split names the dataset's examples carry."""
        dataset = self.read_dataset(dataset_name=dataset_name, dataset_id=dataset_id)
        names = {name for example in self.store.iter_examples(dataset.id) for name in split_names(example)}
        return sorted(names)

    def update_dataset_splits(
        self,
        *,
        dataset_id: ID | None = None,
        dataset_name: str | None = None,
        split_name: str,
        example_ids: Sequence[ID],
        remove: bool = False,
    ) -> None:
        """Add the examples to ``split_name`` (or take them out, with ``remove=True``)."""
        self.read_dataset(dataset_name=dataset_name, dataset_id=dataset_id)
        for example in [self.read_example(example_id) for example_id in example_ids]:
            names = [name for name in split_names(example) if name != split_name]
            if not remove:
                names.append(split_name)
            self.store.update_example(_edited(example, {"split": names}))

    def create_example_from_run(
        self,
        run: Run,
        dataset_id: ID | None = None,
        dataset_name: str | None = None,
        created_at: Any = None,
        **ignored: Any,
    ) -> Example:
        """An example whose inputs and reference outputs are what the run received and returned."""
        return self.create_example(
            dict(run.inputs),
            dataset_id,
            dataset_name,
            created_at,
            outputs=dict(run.outputs or {}) or None,
            source_run_id=run.id,
        )

    def create_llm_example(
        self,
        prompt: str,
        generation: str | None = None,
        dataset_id: ID | None = None,
        dataset_name: str | None = None,
        created_at: Any = None,
    ) -> Example:
        """LangSmith's LLM example shape: ``{"input": prompt}`` -> ``{"output": generation}``."""
        outputs = None if generation is None else {"output": generation}
        return self.create_example({"input": prompt}, dataset_id, dataset_name, created_at, outputs=outputs)

    def create_chat_example(
        self,
        messages: list[Any],
        generations: Any = None,
        dataset_id: ID | None = None,
        dataset_name: str | None = None,
        created_at: Any = None,
    ) -> Example:
        """LangSmith's chat example shape: ``{"input": messages}`` -> ``{"output": generations}``."""
        plain = [_message(message) for message in messages]
        outputs = None if generations is None else {"output": _message(generations)}
        return self.create_example({"input": plain}, dataset_id, dataset_name, created_at, outputs=outputs)


#: where a dataset keeps its version tags: ``{tag: version}`` in its metadata
VERSION_TAGS = "version_tags"


def _tags_of(dataset: Dataset) -> dict[str, int]:
    tags = dataset.metadata.get(VERSION_TAGS)
    return dict(tags) if isinstance(tags, dict) else {}


def version_of(dataset: Dataset, as_of: Any) -> int | None:
    """The version number ``as_of`` names: a number, ``"latest"`` (None: the current one),
    or a tag; anything else is refused, saying what to pass."""
    if as_of is None or as_of == "latest":
        return None
    if isinstance(as_of, int) and not isinstance(as_of, bool):
        if not 0 <= as_of <= dataset.version:
            raise ValueError(f"dataset {dataset.name!r} has versions 0 to {dataset.version}; as_of={as_of}")
        return as_of
    if isinstance(as_of, str):
        tags = _tags_of(dataset)
        if as_of not in tags:
            known = ", ".join(sorted(tags)) or "none"
            raise ValueError(f"dataset {dataset.name!r} has no version tagged {as_of!r} (tags: {known})")
        return tags[as_of]
    raise TypeError(
        f"as_of= takes a version number (Dataset.version, or the as_of that create_examples "
        f"returned), a tag or 'latest'; got {type(as_of).__name__} (assay numbers versions instead "
        "of timing them)"
    )


def filtered(
    examples: Iterable[Example],
    *,
    splits: Sequence[str] | None,
    metadata: Mapping[str, Any] | None,
    example_ids: Sequence[ID] | None,
) -> Iterator[Example]:
    """``list_examples``' filters: in any of ``splits``, with every ``metadata`` pair,
    among ``example_ids``."""
    wanted_ids = {as_uuid(example_id, "example_ids") for example_id in example_ids or ()}
    for example in examples:
        if wanted_ids and example.id not in wanted_ids:
            continue
        if splits and not set(splits) & set(split_names(example)):
            continue
        if metadata and any((example.metadata or {}).get(k, _MISSING) != v for k, v in metadata.items()):
            continue
        yield example


def page(examples: Iterable[Example], offset: int, limit: int | None) -> list[Example]:
    return list(itertools.islice(examples, offset, None if limit is None else offset + limit))


_MISSING = object()


def split_names(example: Example) -> list[str]:
    """An example's splits; LangSmith keeps a list, or one name, under ``dataset_split``
    (none means the ``base`` split)."""
    value = (example.metadata or {}).get(SPLIT_KEY)
    if value is None:
        return ["base"]
    return [value] if isinstance(value, str) else [str(name) for name in value]


def _update_fields(update: Mapping[str, Any] | ExampleUpdate) -> Mapping[str, Any]:
    if isinstance(update, ExampleUpdate):
        return {name: getattr(update, name) for name in update.model_fields_set}
    return update


def _updates(
    updates: Sequence[Mapping[str, Any]] | None,
    example_ids: Sequence[ID] | None,
    columns: dict[str, Sequence[Any] | None],
) -> list[dict[str, Any]]:
    if updates is not None:
        if example_ids is not None:
            raise ValueError("pass updates=[...] or example_ids= with inputs=/outputs=/..., not both")
        for index, update in enumerate(updates):
            unknown = set(update) - _UPDATE_FIELDS
            if "id" not in update or unknown:
                raise ValueError(
                    f"updates[{index}] needs 'id' and only {sorted(_UPDATE_FIELDS)}; got {sorted(update)}"
                )
        return [dict(update) for update in updates]
    if example_ids is None:
        raise ValueError("update_examples needs updates=[...] or example_ids=[...]")
    for name, column in columns.items():
        if column is not None and len(column) != len(example_ids):
            raise ValueError(f"{name} has {len(column)} items but example_ids has {len(example_ids)}")
    return [
        {"id": example_id, **{name: column[index] for name, column in columns.items() if column is not None}}
        for index, example_id in enumerate(example_ids)
    ]


def _edited(example: Example, change: Mapping[str, Any]) -> Example:
    fields = {
        name: change[name] for name in ("inputs", "outputs", "metadata") if change.get(name) is not None
    }
    if change.get("split") is not None:
        fields["metadata"] = {**(fields.get("metadata", example.metadata) or {}), SPLIT_KEY: change["split"]}
    if change.get("attachments") is not None or change.get("attachments_operations") is not None:
        from assay.client._attachments import attachments_after

        fields["attachments"] = attachments_after(
            example, change.get("attachments"), change.get("attachments_operations")
        )
    return example.model_copy(update=fields)


def _message(message: Any) -> Any:
    """A LangChain message object as LangSmith stores it (its dict form); dicts as they are."""
    to_dict = getattr(message, "model_dump", None) or getattr(message, "dict", None)
    return to_dict() if callable(to_dict) and not isinstance(message, dict) else message
