"""A row's lines of ``COPY ... FROM STDIN`` text.

Made by the PostgreSQL writer process (``_writer_child``, which loads this module by
path and imports nothing of assay), or by the run's writer thread for the batches it
writes itself (``_batch``); a batch's bytes are joined and sent in one write per table.

The format: columns separated by tabs, ``\\N`` for NULL, and backslash, tab, newline and
carriage return escaped with a backslash. A NUL, which PostgreSQL text cannot hold, is
stored as the two characters ``\\0``, as the store stores it elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded by path in the writer process, which imports no assay
    from assay.store._row_text import Encoded

__all__ = ["CopyReady", "copy_ready"]

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": "\\\\0"})


class CopyReady(tuple):  # type: ignore[type-arg]
    """An encoded row (``Encoded``: the run's row and its results' rows) with its lines of
    COPY text for each table, as UTF-8."""

    run_text: bytes
    results_text: bytes


def copy_ready(encoded: Encoded) -> Encoded:
    """``encoded`` with its COPY lines; as it is when they cannot be made (text UTF-8
    cannot carry): the writer then sends it through psycopg, which says why."""
    run, results = encoded
    try:
        run_text = _line(run).encode()
        results_text = "".join([_line(result) for result in results]).encode()
    except UnicodeEncodeError:
        return encoded
    ready = CopyReady(encoded)
    ready.run_text, ready.results_text = run_text, results_text
    return ready


def _line(row: Sequence[Any]) -> str:
    # inline tests for the common values (None, a string with nothing to escape): a call
    # per value would cost more than the test. A printable string holds no tab, newline,
    # carriage return or NUL, so with no backslash it has nothing to escape (two C
    # calls: ~80 ns against a regex search's ~180); any other string is escaped by
    # ``_field``, which leaves alone what is not special.
    return (
        "\t".join(
            [
                "\\N"
                if value is None
                else value
                if type(value) is str and value.isprintable() and "\\" not in value
                else _field(value)
                for value in row
            ]
        )
        + "\n"
    )


def _field(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return str(value.translate(_ESCAPES))
    if kind is bool:
        return "1" if value else "0"
    if kind is int:
        return str(value)
    if kind is float:
        return repr(value)  # exact; PostgreSQL reads inf, -inf and nan too
    return str(value).translate(_ESCAPES)
