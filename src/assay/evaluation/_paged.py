"""Stored rows as sequences read from the store a page at a time.

An experiment's rows, and the per-row lists that summary evaluators take (``runs``,
``outputs``, ``reference_outputs``...), are never held in memory whole: each is a
``PagedSequence`` that reads pages in data order when iterated, and the page holding an
index when indexed. ``len`` is the stored row count. ``list(seq)`` makes a plain list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, overload

from assay.store.base import RowKey, Store
from assay.store.records import ExperimentRecord, ExperimentRow

T = TypeVar("T")
PAGE_SIZE = 1000

FetchPage = Callable[[RowKey | None, int, int], list[tuple[RowKey, T]]]
"""(after, offset, limit) -> up to ``limit`` (key, item) pairs in data order."""


class PagedSequence(Sequence[T]):
    """A read-only sequence over stored rows; see the module docstring."""

    def __init__(
        self, fetch: FetchPage[T], length: int | Callable[[], int], page_size: int = PAGE_SIZE
    ) -> None:
        self._fetch = fetch
        self._length = length
        self._page_size = page_size
        self._cached: tuple[int, list[T]] = (-1, [])  # (first index, items) of the last page read

    def __len__(self) -> int:
        return self._length if isinstance(self._length, int) else self._length()

    def pages(self) -> Iterator[list[T]]:
        """The items in data order, one page at a time (keyset: page k costs as page 1)."""
        after: RowKey | None = None
        while True:
            page = self._fetch(after, 0, self._page_size)
            if not page:
                return
            yield [item for _, item in page]
            if len(page) < self._page_size:
                return
            after = page[-1][0]

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index < 0:
            raise IndexError("index out of range")
        first, items = self._cached
        if not first <= index < first + len(items):
            first = index - index % self._page_size
            items = [item for _, item in self._fetch(None, first, self._page_size)]
            self._cached = (first, items)
        if index - first >= len(items):
            raise IndexError("index out of range")
        return items[index - first]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, PagedSequence)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} stored rows, read on demand>"


def stored_rows(
    store: Store, experiment: ExperimentRecord, count: int | None = None
) -> PagedSequence[ExperimentRow]:
    """The experiment's rows; ``count`` when known and fixed (a finished experiment)."""

    def fetch(after: RowKey | None, offset: int, limit: int) -> list[tuple[RowKey, ExperimentRow]]:
        rows = store.load_rows(experiment, after=after, offset=offset, limit=limit)
        return [((row.position, row.repetition), row) for row in rows]

    return PagedSequence(fetch, count if count is not None else lambda: store.count_rows(experiment.id))


def summary_arguments(store: Store, experiment: ExperimentRecord, count: int) -> dict[str, Any]:
    """What summary evaluators may take, each read from the store only if it is used."""

    def projected(project: Callable[[ExperimentRow], Any]) -> PagedSequence[Any]:
        def fetch(after: RowKey | None, offset: int, limit: int) -> list[tuple[RowKey, Any]]:
            rows = store.load_rows(experiment, after=after, offset=offset, limit=limit)
            return [((row.position, row.repetition), project(row)) for row in rows]

        return PagedSequence(fetch, count)

    def values(field: str) -> PagedSequence[Any]:
        def fetch(after: RowKey | None, offset: int, limit: int) -> list[tuple[RowKey, Any]]:
            return store.load_row_values(experiment, field, after=after, offset=offset, limit=limit)

        return PagedSequence(fetch, count)

    return {
        "runs": projected(lambda row: row.run),
        "examples": projected(lambda row: row.example),
        "inputs": values("inputs"),
        "outputs": values("outputs"),
        "reference_outputs": values("reference_outputs"),
        "evaluation_results": projected(lambda row: row.results),
    }
