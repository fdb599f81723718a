"""The target under evaluation: called with an example's inputs, recorded as a root Run."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from assay._ids import new_id
from assay._traceback import format_traceback
from assay.errors import AssayError
from assay.evaluation._binding import _callable_name, _is_async_callable
from assay.schemas import Example, Run, utcnow
from assay.tracing import reset_current_run, set_current_run


class TargetError(AssayError, TypeError):
    """The target is not something assay can call."""


class Target:
    """Wraps a sync or async callable (or an object with ``invoke``/``ainvoke``)."""

    def __init__(self, target: Any) -> None:
        self.fn, self.is_async = _callable_of(target)
        self.name = _callable_name(target)

    def run_sync(self, example: Example, repetition: int) -> Run:
        frame = _RootFrame()
        token = set_current_run(frame)
        try:
            outputs, error = _as_outputs(self.fn(example.inputs)), None
        except (Exception, SystemExit) as exc:  # failures are data; sys.exit() in a target too
            outputs, error = None, exc
        finally:
            reset_current_run(token)
        return self._run(frame, example, repetition, outputs, error)

    async def run_async(self, example: Example, repetition: int) -> Run:
        frame = _RootFrame()
        token = set_current_run(frame)
        try:
            outputs, error = _as_outputs(await self.fn(example.inputs)), None
        except (Exception, SystemExit) as exc:  # failures are data; sys.exit() in a target too
            outputs, error = None, exc
        finally:
            reset_current_run(token)
        return self._run(frame, example, repetition, outputs, error)

    def _run(
        self, frame: _RootFrame, example: Example, repetition: int,
        outputs: dict[str, Any] | None, error: BaseException | None,
    ) -> Run:
        # Built once, complete: setting fields one by one on a pydantic model costs more
        # than the trivial target it records.
        extra: dict[str, Any] = {"repetition": repetition}
        if error is not None:
            extra["traceback"] = format_traceback(error)
        return Run(
            id=frame.id, trace_id=frame.id, name=self.name, run_type="chain",
            inputs=example.inputs, outputs=outputs,
            error=None if error is None else f"{type(error).__name__}: {error}",
            start_time=frame.start_time, end_time=utcnow(), child_runs=frame.child_runs,
            extra=extra, reference_example_id=example.id,
        )

    def check_signature(self) -> None:
        """Fail before the first row when the target cannot take the inputs dict."""
        try:
            inspect.signature(self.fn).bind({})
        except TypeError as exc:
            raise TargetError(
                f"target {self.name!r} must take one positional argument, the example's inputs "
                f"dict: {self.name}{inspect.signature(self.fn)} ({exc})"
            ) from None
        except ValueError:
            pass  # a builtin without a readable signature: find out at call time


@dataclass
class _RootFrame:
    """Stands in for the root run while the target runs, collecting traced child runs."""

    id: uuid.UUID = field(default_factory=new_id)
    start_time: datetime = field(default_factory=utcnow)
    child_runs: list[Run] = field(default_factory=list)

    @property
    def trace_id(self) -> uuid.UUID:
        return self.id


def _callable_of(target: Any) -> tuple[Callable[..., Any], bool]:
    if callable(target):
        return target, _is_async_callable(target)
    if hasattr(target, "ainvoke"):
        return target.ainvoke, True
    if hasattr(target, "invoke"):
        return target.invoke, False
    raise TargetError(
        f"target {target!r} is not callable; pass a function taking the example's inputs dict "
        "(sync or async) or an object with invoke()/ainvoke()"
    )


def _as_outputs(value: Any) -> dict[str, Any]:
    if inspect.isgenerator(value):  # a streaming target: keep what it yielded
        value = list(value)
    if inspect.isasyncgen(value):
        raise TypeError(
            "the target is an async generator; wrap it in an `async def` that collects its "
            "chunks and returns them"
        )
    if inspect.isawaitable(value):
        if inspect.iscoroutine(value):
            value.close()  # never awaited: close it quietly instead of a RuntimeWarning
        raise TypeError(
            "the target returned an awaitable without awaiting it; make the target itself "
            "`async def` (assay awaits async targets), or return the result"
        )
    if not isinstance(value, dict):
        return {"output": value}
    if all(isinstance(key, str) for key in value):
        return value
    return {str(key): item for key, item in value.items()}  # JSON objects have string keys
