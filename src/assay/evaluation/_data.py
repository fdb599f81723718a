"""Turning ``data=`` into stored, versioned examples.

``data`` may be a dataset name or id in the store, a ``Dataset``, a path to a
``.jsonl`` / ``.json`` / ``.csv`` file, or a list of ``Example``s or dicts. Files and
lists become a content-addressed dataset in the store (same content, same dataset,
same example ids), so every experiment points at examples that exist and resume works.
Their examples' ids start with the content's digest and end with the position
(``content_id_texts``); a dataset stored before that (ids of version 5) is found by its
name and run on with the ids it holds.

``.jsonl`` and ``.csv`` files are streamed, in two passes: the first checks every line
(a bad one is an error naming file and line, before anything is stored) and hashes the
content; the second, only when that content is not stored yet, adds the examples in one
transaction. Memory stays bounded whatever the file's size. A ``.json`` file is one
document, read whole.
"""

from __future__ import annotations

import codecs
import csv
import dataclasses
import hashlib
import itertools
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay._ids import MAX_POSITIONS, content_id_texts, name_based_id
from assay.errors import AlreadyExistsError, DataError
from assay.evaluation._inline_files import file_digests
from assay.schemas import Dataset, Example, trusted_builder, utcnow
from assay.store.base import ExampleValues, Store

_NAMESPACE = uuid.UUID("5d1f5b7e-8a7c-4f43-9a55-3c0b4f1a7a11")
_EXAMPLE_FIELDS = {"id", "inputs", "outputs", "metadata", "attachments"}
FILE_SUFFIXES = (".jsonl", ".json", ".csv")


@dataclass(frozen=True)
class ResolvedData:
    """A stored dataset version; its examples are read from the store when needed."""

    dataset: Dataset
    version: int
    count: int
    attachments: dict[uuid.UUID, Any] = dataclasses.field(default_factory=dict)
    """Given with inline data for this run only (file readers, bytes): never stored."""
    kept: Callable[[], Iterator[Example]] | None = None
    """The examples this call stored, as the store reads them back, without a query."""

    def examples(self, store: Store) -> Iterator[Example]:
        examples = (
            self.kept()
            if self.kept is not None
            else store.iter_examples(self.dataset.id, version=self.version)
        )
        if not self.attachments:
            return examples
        return (self._attach(example) for example in examples)

    def _attach(self, example: Example) -> Example:
        given = self.attachments.get(example.id)
        if given is not None:
            example.attachments = given
        return example


def resolve_data(data: Any, store: Store) -> ResolvedData:
    if isinstance(data, Dataset):
        return _stored(store, store.get_dataset(id=data.id), repr(data.name))
    if isinstance(data, uuid.UUID):
        return _stored(store, store.get_dataset(id=data), str(data))
    if isinstance(data, Path) or (isinstance(data, str) and data.lower().endswith(FILE_SUFFIXES)):
        path = Path(data)
        return _inline(store, _Records(lambda: iter_file(path)), name_hint=path.stem)
    if isinstance(data, str):
        dataset = _find_dataset(store, data)
        if dataset is None and Path(data).is_file():
            raise DataError(f"{data}: unsupported file type; use .jsonl, .json or .csv")
        return _stored(store, dataset, repr(data), name=data)
    if isinstance(data, Iterable) and not isinstance(data, (dict, bytes)):
        records = [
            item if _plain_record(item) else _coerce(item, f"data[{i}]") for i, item in enumerate(data)
        ]
        return _inline(store, _Records(lambda: iter(records)), "inline")
    raise DataError(
        f"data={data!r} is not supported: pass a dataset name or id, a Dataset, a path to a "
        ".jsonl/.json/.csv file, or a list of Examples or dicts"
    )


def _find_dataset(store: Store, name_or_id: str) -> Dataset | None:
    dataset = store.get_dataset(name=name_or_id)
    if dataset is None:
        try:
            dataset = store.get_dataset(id=uuid.UUID(name_or_id))
        except ValueError:
            pass
    return dataset


def _stored(store: Store, dataset: Dataset | None, label: str, name: str | None = None) -> ResolvedData:
    if dataset is None:
        from assay._suggest import did_you_mean  # only on this error path

        hint = did_you_mean(name, (d.name for d in store.list_datasets())) if name else ""
        raise DataError(f"no dataset {label}{hint} in the store at {store.url}")
    count = store.count_examples(dataset.id, version=dataset.version)
    if not count:
        raise DataError(f"dataset {dataset.name!r} has no examples")
    return ResolvedData(dataset, dataset.version, count)


@dataclass(frozen=True)
class _Records:
    """Checked records that can be read again from the start (a file is read twice)."""

    read: Callable[[], Iterator[dict[str, Any]]]


def _inline(store: Store, records: _Records, name_hint: str) -> ResolvedData:
    digest, count, attached = _digest(records.read())
    stored_files = {index for index, (_, _, files) in attached.items() if files}
    if not count:
        raise DataError("data holds no examples")
    if count > MAX_POSITIONS:
        raise DataError(
            f"data holds {count:,} examples; inline data holds at most {MAX_POSITIONS:,}: store it "
            "with Client.create_examples in parts and pass the dataset's name"
        )
    name = f"{name_hint}-{digest[:12]}"
    dataset = store.get_dataset(name=name)
    kept = None
    if dataset is None:
        try:
            dataset = store.create_dataset(
                name, description="created by evaluate() from inline data", metadata={_DIGEST_KEY: digest}
            )
        except AlreadyExistsError:  # another process (a shard) is storing the same data now
            dataset = _filled(store, name)
        else:
            try:  # one transaction: all or nothing
                if stored_files:  # files are stored with their examples: a record each
                    version = store.add_examples(
                        dataset.id, _examples(records.read(), digest, dataset.id, stored_files)
                    )
                else:
                    version, kept = store.add_example_values(
                        dataset.id, _values(records.read(), digest), keep=True, new=True
                    )
            except BaseException:
                store.delete_dataset(dataset.id)  # no empty dataset left under the content's name
                raise
            # Just stored, by this call: its version and count are known without a query.
            dataset = dataset.model_copy(update={"version": version, "example_count": count})
            resolved = ResolvedData(dataset, version, count, kept=kept)
            return _with_attachments(resolved, attached, digest, stored_before=False)
    elif dataset.version == 0:
        dataset = _filled(store, name)
    found = _stored(store, dataset, repr(name))
    _check_content(store, found, digest, records)
    return _with_attachments(found, attached, digest, stored_before=True)


_DIGEST_KEY = "content_sha256"
"""In the metadata of a dataset stored from inline data: its content's whole digest."""


def _check_content(store: Store, found: ResolvedData, digest: str, records: _Records) -> None:
    """A dataset found by its content's name holds that content. The name keeps 12 hex
    digits (48 bits) of the digest, which chosen data can match (about 2**24 tries make
    some pair, 2**48 one given dataset's), so the digest kept in its metadata must be
    the whole one; a dataset stored before that must hold an example with the id one of
    the first records gives it (``_holds_a_first_record``). Edits made since (examples
    added, changed, deleted) are the user's and are kept, as before."""
    dataset = found.dataset
    kept = (dataset.metadata or {}).get(_DIGEST_KEY)
    same = kept == digest if kept is not None else _holds_a_first_record(store, dataset.id, digest, records)
    if not same:
        raise DataError(
            f"dataset {dataset.name!r} in {store.url} holds other data than data= although its name "
            f"is this data's (the first 12 digits of its SHA-256, {digest}): data made to match "
            "it, or another dataset renamed so. Delete or rename that dataset, or store this data "
            "with Client.create_dataset and create_examples under a name of your own and pass "
            "that name"
        )


#: how many of the first records a dataset stored before content digests were kept is
#: probed for (one deleted since does not make it another content's)
_PROBED_RECORDS = 32


def _holds_a_first_record(store: Store, dataset_id: uuid.UUID, digest: str, records: _Records) -> bool:
    """Whether the dataset holds the example one of the first records names: its own id,
    or one named by 122 bits of this content's digest, which other data cannot match."""
    for index, record in enumerate(itertools.islice(records.read(), _PROBED_RECORDS)):
        given = record.get("id")
        named = {_example_id(given, digest, index)} | (
            {_legacy_id(digest, index)} if given is None else set()
        )
        for example_id in named:
            found = store.get_example(example_id)
            if found is not None and found.dataset_id == dataset_id:
                return True
    return False


_DIGEST_PAGE = 1000


def _digest(records: Iterator[dict[str, Any]]) -> tuple[str, int, dict[int, Any]]:
    """The content's hash, the record count and the given attachments by index (with
    whether they are files, to store), in one pass. The bytes hashed are those of
    ``json.dumps`` of the whole list (as datasets made before streaming were named),
    written a page of records at a time (one call of the C encoder a page: most of the
    cost on small records is per call); files count by their name, type and SHA-256."""
    sha, count = hashlib.sha256(b"["), 0
    attached: dict[int, Any] = {}
    encode = _DIGEST_ENCODER.encode
    while page := list(itertools.islice(records, _DIGEST_PAGE)):
        first = count
        if any(map(dict.__contains__, page, itertools.repeat("attachments"))):  # a scan in C
            page = [_hashed_part(record, index, attached) for index, record in enumerate(page, count)]
        count += len(page)
        text = _canonical(encode, page)[1:-1]  # the page's records, without its brackets
        sha.update((", " + text if first else text).encode())
    sha.update(b"]")
    return sha.hexdigest(), count, attached


def _hashed_part(record: dict[str, Any], index: int, attached: dict[int, Any]) -> dict[str, Any]:
    """A record as its content is hashed: without its given attachments, which are noted
    in ``attached`` by ``index``, with its files' digests instead when it has files."""
    if "attachments" not in record:
        return record
    given = record["attachments"]
    record = {k: v for k, v in record.items() if k != "attachments"}
    if given:
        files = file_digests(given, f"data[{index}]")
        attached[index] = (record.get("id"), given, files is not None)
        if files is not None:
            record["attachments"] = files
    return record


_DIGEST_ENCODER = json.JSONEncoder(sort_keys=True, default=str, ensure_ascii=True)
"""What ``json.dumps(..., sort_keys=True, default=str, ensure_ascii=True)`` uses, made once
instead of per page."""


def _canonical(encode: Callable[[Any], str], records: list[dict[str, Any]]) -> str:
    """JSON of records for their hash; an integer past the digits limit of ``int -> str``
    (``math.factorial(2000)``) hashed as the store keeps it (tagged hex), since the
    encoder refuses it."""
    try:
        return encode(records)
    except ValueError:
        return encode(_huge_ints_tagged(records))


def _huge_ints_tagged(value: Any) -> Any:
    """Integers written as the store's codec writes those past 64 bits: ``{"$int": hex}``."""
    if type(value) is int and not -(2**63) <= value < 2**64:
        return {"$int": ("-" if value < 0 else "") + format(abs(value), "x")}
    if isinstance(value, dict):
        return {key: _huge_ints_tagged(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_huge_ints_tagged(item) for item in value]
    return value


def _filled(store: Store, name: str, timeout: float = 30.0) -> Dataset:
    """The content-addressed dataset ``name`` once the process creating it has added its
    examples (creating it and adding them are two transactions)."""
    deadline = time.monotonic() + timeout
    while True:
        dataset = store.get_dataset(name=name)
        if dataset is not None and dataset.version > 0:
            return dataset
        if time.monotonic() > deadline:
            raise DataError(
                f"dataset {name!r} in {store.url} was created without examples (the process storing "
                "them stopped?); delete it and run again"
            )
        time.sleep(0.05)


def _with_attachments(
    resolved: ResolvedData, attached: dict[int, Any], digest: str, stored_before: bool
) -> ResolvedData:
    """Attachments (file readers, bytes) are not stored: hand the given ones to this run.
    A dataset ``stored_before`` this call may hold the version 5 ids of earlier versions:
    the files are keyed by those too (the two kinds never equal, their versions differ)."""
    given = {_example_id(given_id, digest, i): files for i, (given_id, files, _) in attached.items()}
    if stored_before:
        given |= {
            _legacy_id(digest, i): files for i, (given_id, files, _) in attached.items() if given_id is None
        }
    return dataclasses.replace(resolved, attachments=given) if given else resolved


def _example_id(given: Any, digest: str, index: int) -> uuid.UUID:
    if given is None:
        return uuid.UUID(content_id_texts(digest)(index))
    return given if isinstance(given, uuid.UUID) else _parse_id(str(given))


def _legacy_id(digest: str, index: int) -> uuid.UUID:
    """The id that versions before content ids gave the example at ``index``."""
    return name_based_id(_NAMESPACE, f"{digest}:{index}")


def _values(records: Iterator[dict[str, Any]], digest: str) -> Iterator[ExampleValues]:
    """From records ``_coerce`` checked (their parts are objects or None): the examples'
    values, ids as text (a given id as its UUID's text, else named by the content's
    digest and the position)."""
    named = content_id_texts(digest)
    for index, record in enumerate(records):
        get = record.get
        given = get("id")
        id_ = named(index) if given is None else str(_example_id(given, digest, index))
        yield id_, record["inputs"], get("outputs"), get("metadata")


_build_example = trusted_builder(Example, ("id", "dataset_id", "inputs", "outputs", "metadata", "created_at"))


def _examples(
    records: Iterator[dict[str, Any]], digest: str, dataset_id: uuid.UUID, stored_files: set[int]
) -> Iterator[Example]:
    """From records ``_coerce`` checked (their parts are objects or None): unvalidated,
    all created at one instant (they are stored in one transaction); the records of
    ``stored_files`` with their files."""
    created_at = utcnow()
    for index, record in enumerate(records):
        get = record.get
        id_ = _example_id(get("id"), digest, index)
        made = _build_example(id_, dataset_id, record["inputs"], get("outputs"), get("metadata"), created_at)
        if index in stored_files:
            made.attachments = record["attachments"]
        yield made


def _parse_id(text: str) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        return uuid.uuid5(_NAMESPACE, text)


def _plain_record(item: Any) -> bool:
    """Whether ``item`` is already the record ``_coerce`` would make (the common case of
    inline data, checked without a copy): a dict of known fields whose ``inputs`` is a
    dict, and ``outputs`` and ``metadata`` dicts or None. Anything else goes through
    ``_coerce``, which says what is wrong."""
    if type(item) is not dict or "inputs" not in item or not item.keys() <= _EXAMPLE_FIELDS:
        return False
    get = item.get
    outputs, metadata = get("outputs"), get("metadata")
    return (
        type(item["inputs"]) is dict
        and (outputs is None or type(outputs) is dict)
        and (metadata is None or type(metadata) is dict)
    )


def _coerce(item: Any, where: str) -> dict[str, Any]:
    """An Example or dict as a plain record ``{"inputs", "outputs", "metadata", "id"?}``."""
    if isinstance(item, Example):
        record = {"id": item.id, "inputs": item.inputs, "outputs": item.outputs, "metadata": item.metadata}
        return {**record, "attachments": item.attachments} if item.attachments else record
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected an Example or a dict, got {type(item).__name__}")
    if "inputs" not in item:
        return {"inputs": item}  # a flat record is all inputs
    unknown = set(item) - _EXAMPLE_FIELDS
    if unknown:
        raise DataError(
            f"{where}: unknown example fields {sorted(unknown)}; expected {sorted(_EXAMPLE_FIELDS)}"
        )
    for field in ("inputs", "outputs", "metadata"):
        if item.get(field) is not None and not isinstance(item[field], dict):
            raise DataError(f"{where}: {field!r} must be an object, got {type(item[field]).__name__}")
    if not isinstance(item["inputs"], dict):
        raise DataError(f"{where}: 'inputs' must be an object")
    return dict(item)


def load_file(path: Path) -> list[dict[str, Any]]:
    """Read examples from ``.jsonl``, ``.json`` or ``.csv``; errors name file and line."""
    return list(iter_file(path))


def iter_file(path: Path) -> Iterator[dict[str, Any]]:
    """The checked records of ``.jsonl``, ``.json`` or ``.csv``, one at a time (a
    ``.json`` file is parsed whole first); errors name file and line."""
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    loader = {".jsonl": _load_jsonl, ".json": _load_json, ".csv": _load_csv}.get(path.suffix.lower())
    if loader is None:
        raise DataError(f"{path}: unsupported file type; use .jsonl, .json or .csv")
    yield from loader(path)


def _text_lines(path: Path) -> Iterator[str]:
    """The file's lines as text (line endings kept, a leading BOM dropped), decoded one
    line at a time so that a byte that is not UTF-8 is named by its line and by its
    offset in the file."""
    offset = 0
    with path.open("rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw, offset = raw[len(codecs.BOM_UTF8) :], len(codecs.BOM_UTF8)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(_not_utf8(path, lineno, offset, exc)) from None
            offset += len(raw)
            yield text


def _not_utf8(path: Path, lineno: int, line_offset: int, exc: UnicodeDecodeError) -> str:
    """``exc``: from decoding the line that starts at ``line_offset`` in the file."""
    bad = exc.object[exc.start : exc.start + 1].hex()
    return (
        f"{path}:{lineno}: not UTF-8 text ({exc.reason}: byte 0x{bad} at offset "
        f"{line_offset + exc.start} of the file, column {exc.start + 1} of the line); "
        "save the file as UTF-8"
    )


def _load_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    for lineno, line in enumerate(_text_lines(path), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, parse_constant=_no_constants)
        except (json.JSONDecodeError, ValueError) as exc:
            raise DataError(f"{path}:{lineno}: invalid JSON: {_reason(exc)}") from None
        yield _coerce(value, f"{path}:{lineno}")


def _load_json(path: Path) -> list[dict[str, Any]]:
    text = "".join(_text_lines(path))
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON: {_reason(exc)}") from None
    except ValueError as exc:
        raise DataError(f"{path}: invalid JSON: {exc}") from None
    if isinstance(value, dict) and isinstance(value.get("examples"), list):
        value = value["examples"]
    if not isinstance(value, list):
        raise DataError(f'{path}: expected a list of examples (or {{"examples": [...]}})')
    return [_coerce(item, f"{path}: item {i}") for i, item in enumerate(value)]


def _load_csv(path: Path) -> Iterator[dict[str, Any]]:
    """Columns ``outputs.x`` / ``metadata.x`` go there; any other column is an input.
    The delimiter (``,``, ``;``, tab or ``|``) is read from the header line. Linear in the
    header's size (a count per name, not a scan per column)."""
    from assay.evaluation._csv_dialect import sniff_delimiter  # only CSV data needs it (import cost)

    lines = _text_lines(path)
    header = next(lines, None)
    delimiter = sniff_delimiter(header)
    rest = lines if header is None else itertools.chain([header], lines)
    reader = csv.DictReader(rest, delimiter=delimiter)
    if not reader.fieldnames:
        raise DataError(f"{path}:1: missing header row")
    repeated = sorted(name for name, count in Counter(reader.fieldnames).items() if count > 1)
    if repeated:
        raise DataError(f"{path}:1: repeated column names {repeated[:20]}")
    for row in reader:
        if None in row or any(value is None for value in row.values()):
            raise DataError(_ragged(path, reader.line_num, row, len(reader.fieldnames), delimiter))
        yield _csv_record(row)


def _ragged(path: Path, lineno: int, row: dict[Any, Any], columns: int, delimiter: str) -> str:
    found = sum(value is not None for key, value in row.items() if key is not None)
    from assay.evaluation._csv_dialect import delimiter_name

    found += len(row.get(None) or [])
    name = delimiter_name(delimiter)
    return (
        f"{path}:{lineno}: {found} value{'' if found == 1 else 's'} where the header has {columns} columns, separated "
        f"by {name} (read from the header); give every row {columns} values, and quote a value "
        f"that holds {name} or a line break in double quotes"
    )


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (a score or value must be a finite number)")


def _reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    return str(exc)


def _csv_record(row: dict[str, str]) -> dict[str, Any]:
    record: dict[str, Any] = {"inputs": {}}
    for column, value in row.items():
        section, dot, field = column.partition(".")
        if dot and section in ("inputs", "outputs", "metadata"):
            record.setdefault(section, {})[field] = value
        else:
            record["inputs"][column] = value
    return record
