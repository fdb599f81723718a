"""Argument checks the evaluation entry points share (the re-score uses them; ``_api`` has
its own copies until it moves here)."""

from __future__ import annotations

import difflib
import functools
import inspect
import os
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def as_list(evaluators: Sequence[Any] | None, parameter: str) -> list[Any]:
    if evaluators is None:
        return []
    if callable(evaluators) or isinstance(evaluators, (str, bytes)) or not hasattr(evaluators, "__iter__"):
        raise TypeError(f"{parameter}= takes a list, e.g. {parameter}=[my_evaluator]; got {evaluators!r}")
    return list(evaluators)


def concurrency(max_concurrency: int | None) -> int:
    """Rows in flight: ``None`` or 0 means 4 per CPU."""
    if not max_concurrency:
        return 4 * (os.cpu_count() or 1)
    if max_concurrency < 0:
        raise ValueError(f"max_concurrency must be positive, got {max_concurrency}")
    return max_concurrency


def known_keywords(function: Callable[P, R]) -> Callable[P, R]:
    """``function``, refusing an unknown keyword with a TypeError that names the closest
    valid one (``evaluate(t, dataa=...)``: "did you mean 'data'?"), before it runs."""
    parameters = inspect.signature(function).parameters
    valid = [n for n, p in parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY)]
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())

    def check(kwargs: dict[str, Any]) -> None:
        unknown = [name for name in kwargs if name not in valid]
        if unknown and not takes_any:
            raise TypeError(unknown_keyword(function.__name__, unknown[0], valid))

    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def checked_async(*args: P.args, **kwargs: P.kwargs) -> Any:
            check(kwargs)
            return await function(*args, **kwargs)

        return checked_async  # type: ignore[return-value]

    @functools.wraps(function)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        check(kwargs)
        return function(*args, **kwargs)

    return checked


def unknown_keyword(function: str, name: str, valid: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else f"; it takes {', '.join(valid)}"
    return f"{function}() got an unexpected keyword argument {name!r}{hint}"
