"""Appending examples to a dataset: one transaction, a page of rows per statement.

Both ``Store.add_examples`` (records) and ``Store.add_example_values`` (inline data's
plain values, no record made per example) come here with rows of
``(id text, inputs, outputs, metadata, created_at text)``. Ids are checked unique by a
set: empty when the dataset had no examples before the call (nothing stored can clash
then); when it had some, a call of one page looks its ids up in the dataset's index, and
a longer one reads the dataset's current ids into the set once, at its second page.
That keeps an append linear in the examples on PostgreSQL, whose planner, with the
statistics of a table that just grew, answered the per-page lookup by walking every
example of the dataset (quadratic: 108 s of server CPU to append 40,000). Past
``SEEN_LIMIT`` ids, each page's ids are looked up in the index (earlier pages of the call
are stored by then).
"""

from __future__ import annotations

import itertools
import operator
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from assay.errors import AlreadyExistsError
from assay.store import _row_text
from assay.store._json import dumps
from assay.store.base import ExampleValues

PAGE = 2048  # 8 statements of 256 rows: one statement shape to prepare, not four
SEEN_LIMIT = 200_000  # ids held in memory to check them (~40 MB); beyond, the index checks
KEEP_LIMIT = 50_000  # examples kept for the caller to read back (~300 bytes each)
COLUMNS = "id, dataset_id, position, inputs, outputs, metadata, created_at, added_version"

ExampleRow = tuple[str, Any, Any, Any, "str | None", Any]
"""``(id text, inputs, outputs, metadata, created_at text, attachments)``: one example."""

StoredFields = tuple[str, "str | None", "str | None", "str | None", "str | None", int]
"""An example's fields as a store page reads them (``codec.EXAMPLE_FIELDS``)."""


def insert(
    conn: sqlite3.Connection,
    dataset_id: str,
    version: int,
    rows: Iterable[ExampleRow],
    keep: bool = False,
    on_page: Callable[[list[ExampleRow]], None] | None = None,
) -> list[StoredFields] | None:
    """Append ``rows`` at the end of the dataset as ``version``. With ``keep``, returns
    the stored examples' fields as a page of the store reads them, unless there were more
    than ``KEEP_LIMIT`` (the caller reads them from the store then). ``on_page`` is called
    with each page once it is inserted (the store links the examples' files then)."""

    def encode(page: list[ExampleRow], position: int) -> list[tuple[Any, ...]]:
        return [
            (id_, dataset_id, at, dumps(inputs), dumps(outputs), dumps(metadata), created_at, version)
            for at, (id_, inputs, outputs, metadata, created_at, _) in enumerate(page, position)
        ]

    return _append(conn, dataset_id, version, rows, encode, keep, on_page)


def insert_values(
    conn: sqlite3.Connection,
    dataset_id: str,
    version: int,
    values: Iterable[ExampleValues],
    created_at: str,
    keep: bool = False,
    start: int | None = None,
) -> list[StoredFields] | None:
    """``insert`` of plain values ``(id text, inputs, outputs, metadata)`` (inline data),
    all created at ``created_at``: no record or row tuple made per example on the way.
    ``start``: the first position, when the caller knows the dataset is empty (0): then
    ``conn`` is only written to, and may be a ``StatementLog`` (at most ``SEEN_LIMIT``
    values, whose ids are checked in memory)."""

    def encode(page: list[ExampleValues], position: int) -> list[tuple[Any, ...]]:
        return [  # most metadata (and some outputs) is None: no call for it
            (
                id_,
                dataset_id,
                at,
                dumps(inputs),
                None if outputs is None else dumps(outputs),
                None if metadata is None else dumps(metadata),
                created_at,
                version,
            )
            for at, (id_, inputs, outputs, metadata) in enumerate(page, position)
        ]

    return _append(conn, dataset_id, version, values, encode, keep, start=start)


_Page = TypeVar("_Page", ExampleRow, ExampleValues)
_stored_fields = operator.itemgetter(0, 3, 4, 5, 6, 2)  # an inserted row's ``StoredFields``


def _append(
    conn: sqlite3.Connection,
    dataset_id: str,
    version: int,
    rows: Iterable[_Page],
    encode: Callable[[list[_Page], int], list[tuple[Any, ...]]],
    keep: bool = False,
    on_page: Callable[[list[_Page]], None] | None = None,
    start: int | None = None,
) -> list[StoredFields] | None:
    """Each page of ``rows`` (whose first item is the example's id) checked for clashing
    ids, encoded into the table's ``COLUMNS`` at its positions, and inserted."""
    kept: list[StoredFields] | None = [] if keep else None
    if start is None:
        start = conn.execute(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM examples WHERE dataset_id = ?", (dataset_id,)
        ).fetchone()[0]
    seen: dict[str, int] | None = {} if start == 0 else None  # removed examples keep their position
    position = start
    for number, page in enumerate(_pages(rows)):
        ids = list(map(_first, page))
        if number == 1 and seen is None:  # a second page into a dataset that had examples
            seen = _current_ids(conn, dataset_id, version)
        if seen is not None and len(seen) + len(ids) <= SEEN_LIMIT:
            _refuse_seen(seen, ids, position - start)
        else:
            seen = None
            _refuse_duplicate_ids(conn, dataset_id, version, position - start, ids)
        values = encode(page, position)
        _row_text.insert_many(conn, "examples", COLUMNS, 8, values)
        if on_page is not None:
            on_page(page)
        if kept is not None and len(kept) + len(values) > KEEP_LIMIT:
            kept = None  # too many to hold: the caller reads them back
        if kept is not None:
            kept.extend(map(_stored_fields, values))
        position += len(page)
    return kept


_first = operator.itemgetter(0)


def _pages(rows: Iterable[_Page]) -> Iterator[list[_Page]]:
    given = iter(rows)
    while page := list(itertools.islice(given, PAGE)):  # taken in C, not a row at a time
        yield page


# In ``seen``, an id the dataset held before the call (not a position in it).
_STORED = -1


def _current_ids(conn: sqlite3.Connection, dataset_id: str, version: int) -> dict[str, int] | None:
    """The dataset's current ids (one read of its index), as ``seen`` holds them: those of
    earlier pages of this call (``version``) at 0 (the clash names the second position),
    the others as stored before. None when there are more than ``SEEN_LIMIT``."""
    rows = conn.execute(
        "SELECT id, added_version FROM examples WHERE dataset_id = ? AND removed_version IS NULL LIMIT ?",
        (dataset_id, SEEN_LIMIT + 1),
    ).fetchall()
    if len(rows) > SEEN_LIMIT:
        return None
    return {row[0]: 0 if row[1] == version else _STORED for row in rows}


def _refuse_seen(seen: dict[str, int], ids: list[str], index: int) -> None:
    """``index``: the page's start in what the caller passed, so errors name a position."""
    if seen.keys().isdisjoint(ids) and len(set(ids)) == len(ids):  # no clash: three passes in C
        seen.update(zip(ids, range(index, index + len(ids))))
        return
    for offset, key in enumerate(ids, start=index):  # a clash: find the first, to name it
        if key in seen:
            if seen[key] == _STORED:
                raise AlreadyExistsError(
                    f"the dataset already has an example with id {key}; use update_example"
                )
            raise AlreadyExistsError(f"example id {key} appears twice (the second at position {offset})")
        seen[key] = offset


def _refuse_duplicate_ids(
    conn: sqlite3.Connection, dataset_id: str, version: int, index: int, ids: list[str]
) -> None:
    """Within the page by a set; against the dataset (and earlier pages of this call,
    stored at ``version``) by the (dataset_id, id) index."""
    seen: dict[str, int] = {}
    _refuse_seen(seen, ids, index)
    marks = ", ".join("?" * len(seen))
    clash = conn.execute(
        f"SELECT id, added_version FROM examples WHERE dataset_id = ? AND id IN ({marks}) "
        "AND removed_version IS NULL LIMIT 1",
        (dataset_id, *seen),
    ).fetchone()
    if clash is None:
        return
    if clash["added_version"] == version:  # an earlier page of this same call
        second = seen[clash["id"]]
        raise AlreadyExistsError(f"example id {clash['id']} appears twice (the second at position {second})")
    raise AlreadyExistsError(f"the dataset already has an example with id {clash['id']}; use update_example")


FIRST_VERSION = "UPDATE datasets SET version = 1 WHERE id = ? AND version = 0 RETURNING version"
"""The guard of a new dataset's first examples: they commit only into the empty dataset
they were made for, once (committed again, they are refused, not added twice)."""


def commit_statements(conn: sqlite3.Connection, statements: list[tuple[str, Any, bool | str]]) -> bool:
    """Run a transaction's statements as the writer process would (``StatementLog``'s);
    False, with nothing run, when its guard (always its first statement) returns no row."""
    for sql, params, many in statements:
        if many == "guard":
            if conn.execute(sql, params).fetchone() is None:
                return False
        elif many:
            conn.executemany(sql, params)
        else:
            conn.execute(sql, params)
    return True
