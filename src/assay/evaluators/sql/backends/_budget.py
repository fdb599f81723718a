"""Byte accounting of a result as it streams, shared by the backends."""

from __future__ import annotations

from typing import Any

from assay.errors import QueryTooLargeError
from assay.evaluators.sql.backends.base import ExecutionLimits


def value_bytes(value: Any) -> int:
    """Bytes a cell holds: text by its UTF-8 length, blobs by length, other values nominally."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return len(value)
    return 8


class ResultBudget:
    """Raises QueryTooLargeError, naming the limit, as soon as a fetched result passes one."""

    def __init__(self, limits: ExecutionLimits) -> None:
        self.limits = limits
        self.total = 0

    def check_value(self, size: int) -> None:
        if size > self.limits.max_value_bytes:
            raise QueryTooLargeError(
                f"a value of {size:,} bytes is larger than max_value_bytes={self.limits.max_value_bytes:,}"
            )

    def add_row(self, size: int) -> None:
        if size > self.limits.max_row_bytes:
            raise QueryTooLargeError(
                f"a row of {size:,} bytes is larger than max_row_bytes={self.limits.max_row_bytes:,}"
            )
        self.total += size
        if self.total > self.limits.max_result_bytes:
            raise QueryTooLargeError(
                f"the result passed max_result_bytes={self.limits.max_result_bytes:,} while it was read"
            )

    def add_cells(self, row: tuple[Any, ...]) -> None:
        """Measure a row the driver already materialized (SQLite)."""
        size = 0
        for value in row:
            cell = value_bytes(value)
            self.check_value(cell)
            size += cell
        self.add_row(size)
