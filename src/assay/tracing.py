"""``@traceable``: record a function call as a Run, nested under the current run.

The current run lives in a contextvar, so nesting works across sync code, threads
started by assay, and asyncio tasks.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, overload

from assay.schemas import Run, utcnow

__all__ = [
    "F", "get_current_run", "reset_current_run", "set_current_run", "trace_into", "traceable",
]


F = TypeVar("F", bound=Callable[..., Any])

_current_run: contextvars.ContextVar[Run | None] = contextvars.ContextVar(
    "assay_current_run", default=None
)


def get_current_run() -> Run | None:
    """The run being recorded in this context, if any."""
    return _current_run.get()


def set_current_run(run: Any) -> contextvars.Token[Run | None]:
    """Make ``run`` (a Run, or anything with ``id``, ``trace_id`` and ``child_runs``) the
    parent of traceable calls until ``reset_current_run``; cheaper than ``trace_into``."""
    return _current_run.set(run)


def reset_current_run(token: contextvars.Token[Run | None]) -> None:
    _current_run.reset(token)


@contextmanager
def trace_into(run: Run) -> Iterator[Run]:
    """Make ``run`` the parent of every traceable call inside the block."""
    token = _current_run.set(run)
    try:
        yield run
    finally:
        _current_run.reset(token)


def _call_inputs(signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError:
        return {"args": list(args), **kwargs}
    arguments = dict(bound.arguments)
    for receiver in ("self", "cls"):  # a method's object is not an input worth recording
        arguments.pop(receiver, None)
    return arguments


def _as_outputs(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"output": value}


def _child(name: str, run_type: str, inputs: dict[str, Any], metadata: dict[str, Any]) -> Run:
    parent = _current_run.get()
    run = Run(name=name, run_type=run_type, inputs=inputs, extra={"metadata": metadata} if metadata else {})
    if parent is not None:
        run.parent_run_id = parent.id
        run.trace_id = parent.trace_id or parent.id
        parent.child_runs.append(run)
    else:
        run.trace_id = run.id
    return run


def _finish(run: Run, outputs: Any = None, error: BaseException | None = None) -> None:
    run.end_time = utcnow()
    if error is not None:
        run.error = f"{type(error).__name__}: {error}"
    else:
        run.outputs = _as_outputs(outputs)


@overload
def traceable(func: F) -> F: ...
@overload
def traceable(
    *, name: str | None = None, run_type: str = "chain", metadata: dict[str, Any] | None = None
) -> Callable[[F], F]: ...


def traceable(
    func: F | None = None,
    *,
    name: str | None = None,
    run_type: str = "chain",
    metadata: dict[str, Any] | None = None,
) -> Any:
    """Decorate a sync or async function so each call is recorded as a (child) Run."""

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        run_name = name or str(getattr(fn, "__name__", "traceable"))
        meta = dict(metadata or {})

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                run = _child(run_name, run_type, _call_inputs(signature, args, kwargs), meta)
                with trace_into(run):
                    try:
                        result = await fn(*args, **kwargs)
                    except BaseException as exc:
                        _finish(run, error=exc)
                        raise
                _finish(run, result)
                return result

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            run = _child(run_name, run_type, _call_inputs(signature, args, kwargs), meta)
            with trace_into(run):
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:
                    _finish(run, error=exc)
                    raise
            _finish(run, result)
            return result

        return wrapper  # type: ignore[return-value]

    return decorate(func) if func is not None else decorate
