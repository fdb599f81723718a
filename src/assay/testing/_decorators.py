"""``@test`` and ``@unit``: LangSmith's decorator form of the pytest mark.

``@test`` (or ``@test(test_suite_name=..., output_keys=[...])``) on a test function is
``@pytest.mark.assay`` with the same options, so the plugin records it as a row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

F = TypeVar("F", bound=Callable[..., Any])


@overload
def test(func: F, /) -> F: ...


@overload
def test(**options: Any) -> Callable[[F], F]: ...


def test(func: Any = None, /, **options: Any) -> Any:
    """Mark a test for recording; the options are the mark's (see the pytest plugin)."""
    import pytest

    mark = pytest.mark.assay(**options)
    if func is not None:
        if not callable(func):
            raise TypeError(f"@test takes a test function or keyword options, got {func!r}")
        return mark(func)
    return mark


# Not a test itself: `from assay import test` in a test module must not be collected.
test.__test__ = False  # type: ignore[attr-defined]
unit = test
