"""A row's lines of PostgreSQL ``COPY`` text: every value escaped exactly as the format
asks (backslash, tab, newline, carriage return; a NUL as the two characters ``\\0``;
``\\N`` for NULL), whatever string it is, the common ones taken on the fast path."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.store.postgres import _copy_text

SPECIAL = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": "\\\\0"}


def _reference(value: Any) -> str:
    """The format, character by character."""
    if value is None:
        return "\\N"
    if type(value) is bool:
        return "1" if value else "0"
    if type(value) is float:
        return repr(value)
    return "".join(SPECIAL.get(char, char) for char in str(value))


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(),  # any code point: control characters, separators, surrogates' neighbours
    st.text(alphabet='ab\\\t\n\r\x00\x01\x85\u2028 {}":'),  # dense in what may need escaping
)


@settings(max_examples=400, deadline=None)
@given(st.lists(values, max_size=16))
def test_a_line_escapes_every_value_as_the_format_asks(row: list[Any]) -> None:
    assert _copy_text._line(row) == "\t".join(_reference(value) for value in row) + "\n"
