"""What the wrappers share: an SDK's async method as a coroutine function, and metadata
each call adds to its run (the model it asked for, its sampling options)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["awaited", "given", "with_call_metadata"]


def awaited(method: Callable[..., Any]) -> Callable[..., Any]:
    """The SDKs' async methods are plain functions returning a coroutine: say what they are,
    so ``traceable`` traces the awaited result."""

    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> Any:
        return await method(*args, **kwargs)

    return call


def with_call_metadata(
    traced: Callable[..., Any], metadata_of: Callable[[dict[str, Any]], dict[str, Any]], *, asynchronous: bool
) -> Callable[..., Any]:
    """``traced`` with ``metadata_of(kwargs)`` added to each call's run metadata."""

    def extra(kwargs: dict[str, Any]) -> dict[str, Any]:
        return {"metadata": metadata_of(kwargs)}

    if asynchronous:

        @functools.wraps(traced)
        async def acall(*args: Any, **kwargs: Any) -> Any:
            return await traced(*args, langsmith_extra=extra(kwargs), **kwargs)

        return acall

    @functools.wraps(traced)
    def call(*args: Any, **kwargs: Any) -> Any:
        return traced(*args, langsmith_extra=extra(kwargs), **kwargs)

    return call


def given(value: Any) -> bool:
    """Whether an SDK argument was given (not its ``NOT_GIVEN`` / ``omit`` default)."""
    return type(value).__name__ not in ("NotGiven", "Omit")
