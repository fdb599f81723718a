"""The target under evaluation: called with an example's inputs, recorded as a root Run."""

from __future__ import annotations

import traceback
from typing import Any, Callable

from assay.evaluation._binding import _callable_name, _is_async_callable
from assay.schemas import Example, Run, utcnow
from assay.tracing import trace_into


class TargetError(TypeError):
    """The target is not something assay can call."""


class Target:
    """Wraps a sync or async callable (or an object with ``invoke``/``ainvoke``)."""

    def __init__(self, target: Any) -> None:
        self.fn, self.is_async = _callable_of(target)
        self.name = _callable_name(target)

    def new_run(self, example: Example, repetition: int) -> Run:
        run = Run(
            name=self.name, run_type="chain", inputs=example.inputs,
            reference_example_id=example.id, extra={"repetition": repetition},
        )
        run.trace_id = run.id
        return run

    def run_sync(self, example: Example, repetition: int) -> Run:
        run = self.new_run(example, repetition)
        with trace_into(run):
            try:
                _record_outputs(run, self.fn(example.inputs))
            except Exception as exc:  # failures are data
                _record_error(run, exc)
        run.end_time = utcnow()
        return run

    async def run_async(self, example: Example, repetition: int) -> Run:
        run = self.new_run(example, repetition)
        with trace_into(run):
            try:
                _record_outputs(run, await self.fn(example.inputs))
            except Exception as exc:  # failures are data
                _record_error(run, exc)
        run.end_time = utcnow()
        return run


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


def _record_outputs(run: Run, value: Any) -> None:
    run.outputs = value if isinstance(value, dict) else {"output": value}


def _record_error(run: Run, exc: BaseException) -> None:
    run.error = f"{type(exc).__name__}: {exc}"
    run.extra["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
