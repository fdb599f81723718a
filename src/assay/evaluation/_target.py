"""The target under evaluation: called with an example's inputs, recorded as a root Run."""

from __future__ import annotations

import inspect
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from assay._ids import new_id
from assay._traceback import describe, format_traceback
from assay.errors import TargetError
from assay.evaluation._attachments import fresh_attachments
from assay.evaluation._binding import _callable_name, _is_async_callable
from assay.schemas import Example, Run, dotted_order_of, trusted_builder, utcnow
from assay.tracing import reset_current_run, set_current_run

# What a target may take, by parameter name, in LangSmith's order.
TARGET_ARGUMENTS = ("inputs", "attachments", "metadata")

# A row's root run: built once, complete and unvalidated (every part is already of its type).
_root_run = trusted_builder(
    Run,
    (
        "id",
        "name",
        "run_type",
        "inputs",
        "outputs",
        "error",
        "start_time",
        "end_time",
        "child_runs",
        "trace_id",
        "extra",
        "reference_example_id",
        "tags",
        "session_id",
        "dotted_order",
    ),
)


class Target:
    """Wraps a sync or async callable (or an object with ``invoke``/``ainvoke``)."""

    def __init__(self, target: Any) -> None:
        self.fn, self.is_async = _callable_of(target)
        self.name = _callable_name(target)
        self.arguments: tuple[str, ...] = ("inputs",)
        self.session_id: uuid.UUID | None = None  # the experiment's id, once it is open

    def _call(self, example: Example) -> Any:
        budgets = sys.modules.get("assay._budget")  # loaded only by a run with max_cost
        if budgets is not None and (budget := budgets.current_budget()) is not None:
            budget.check()  # judge budget spent: the row is not started (resumable)
        if self.arguments == ("inputs",):  # the common case, kept cheap
            return self.fn(example.inputs)
        return self.fn(*[_argument(example, name) for name in self.arguments])

    def run_sync(self, example: Example, repetition: int) -> Run:
        inputs = example.inputs
        frame = _RootFrame(self.name, inputs, self.session_id, new_id(), utcnow(), [])
        token = set_current_run(frame)
        try:
            if self.arguments == ("inputs",) and "assay._budget" not in sys.modules:
                value = self.fn(inputs)  # the common case: no call of _call per row
            else:
                value = self._call(example)
            outputs: dict[str, Any] | None = _str_keys(value) if type(value) is dict else _as_outputs(value)
            error = None
        except (Exception, SystemExit) as exc:  # failures are data; sys.exit() in a target too
            outputs, error = None, exc
        finally:
            reset_current_run(token)
        if error is None and frame.tree is None:  # the common case, made here at once
            return _root_run(
                frame.id,
                self.name,
                "chain",
                inputs,
                outputs,
                None,
                frame.start_time,
                utcnow(),
                frame.child_runs,
                frame.id,
                {"repetition": repetition},
                example.id,
                None,
                self.session_id,
                frame.order,  # set when a traced child asked for the root's dotted order
            )
        return self._run(frame, example, repetition, outputs, error)

    async def run_async(self, example: Example, repetition: int) -> Run:
        frame = _RootFrame(self.name, example.inputs, self.session_id)
        token = set_current_run(frame)
        try:
            outputs, error = _as_outputs(await self._call(example)), None
        except (Exception, SystemExit) as exc:  # failures are data; sys.exit() in a target too
            outputs, error = None, exc
        finally:
            reset_current_run(token)
        return self._run(frame, example, repetition, outputs, error)

    def _run(
        self,
        frame: _RootFrame,
        example: Example,
        repetition: int,
        outputs: dict[str, Any] | None,
        error: BaseException | None,
    ) -> Run:
        # Built once, complete and unvalidated (``trusted``): every part is already of its
        # type (outputs a dict with str keys, ids UUIDs), and validating the record again
        # cost more than the trivial target it records.
        extra: dict[str, Any] = {"repetition": repetition}
        if error is not None:
            extra["traceback"] = format_traceback(error)
        tags: list[str] | None = None
        if frame.tree is not None:  # the target called get_current_run_tree() and edited it
            extra.update({k: v for k, v in frame.tree.extra.items() if k != "repetition"})
            tags = list(frame.tree.tags)
            if tags:
                extra["tags"] = tags  # the store keeps a root run's tags in its extra
            if frame.tree.outputs and outputs is not None:
                outputs = {**frame.tree.outputs, **outputs}
        return _root_run(
            frame.id,
            self.name,
            "chain",
            example.inputs,
            outputs,
            None if error is None else describe(error),
            frame.start_time,
            utcnow(),
            frame.child_runs,
            frame.id,
            extra,
            example.id,
            tags,
            self.session_id,
            frame.order,
        )

    def check_signature(self) -> None:
        """Fail before the first row when the target cannot be called as LangSmith calls it:
        ``(inputs)``, or up to three positional parameters named ``inputs``,
        ``attachments``, ``metadata`` (in any order)."""
        try:
            signature = inspect.signature(self.fn)
        except (TypeError, ValueError):
            return  # a builtin without a readable signature: find out at call time
        self.arguments = target_arguments(self.name, signature)


def target_arguments(name: str, signature: inspect.Signature) -> tuple[str, ...]:
    """Which of the example's parts the target takes, in its parameter order."""
    params = list(signature.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    unbindable = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    where = f"target {name!r} has the signature {name}{signature}"
    if not positional and not any(p.kind is p.VAR_POSITIONAL for p in params):
        raise TargetError(
            f"{where}: Target function must accept at least one positional argument (inputs), "
            "the example's inputs dict"
        )
    if unbindable:
        raise TargetError(f"{where}: keyword-only parameters {unbindable} need defaults")
    if len(required) > len(TARGET_ARGUMENTS):
        raise TargetError(
            f"{where}: Target function must accept at most three arguments without default values: "
            "(inputs, attachments, metadata)."
        )
    odd = [p.name for p in required if p.name not in TARGET_ARGUMENTS]
    if len(required) > 1 and odd:
        raise TargetError(
            f"{where}: When passing multiple positional arguments without default values, each must "
            f"be named 'inputs', 'attachments' or 'metadata'; {odd} is not"
        )
    names = []
    for parameter in positional[:3]:
        if parameter.name not in TARGET_ARGUMENTS:
            break
        names.append(parameter.name)
    return tuple(names) or ("inputs",)


def _argument(example: Example, name: str) -> Any:
    if name == "inputs":
        return example.inputs
    if name == "attachments":
        return fresh_attachments(example.attachments)
    return example.metadata or {}


@dataclass(slots=True)
class _RootFrame:
    """Stands in for the root run while the target runs, collecting traced child runs.

    Cheaper than a RunTree per row; ``get_current_run_tree()`` asks for one (``as_run_tree``)
    only when the target wants it."""

    name: str
    inputs: dict[str, Any]
    session_id: uuid.UUID | None = None
    id: uuid.UUID = field(default_factory=new_id)
    start_time: datetime = field(default_factory=utcnow)
    child_runs: list[Run] = field(default_factory=list)
    tree: Any | None = None
    session_name: str = "default"
    order: str | None = None

    @property
    def trace_id(self) -> uuid.UUID:
        return self.id

    @property
    def dotted_order(self) -> str:
        """Computed when a traced child first needs it: most rows never do, and it costs
        as much as the rest of the row's bookkeeping."""
        if self.order is None:
            self.order = dotted_order_of(self.start_time, self.id, None)
        return self.order

    def as_run_tree(self) -> Any:
        """The row's root run as a RunTree sharing this frame's children."""
        if self.tree is None:
            from assay.tracing.run_tree import RunTree

            self.tree = RunTree(
                id=self.id,
                trace_id=self.id,
                name=self.name,
                inputs=self.inputs,
                start_time=self.start_time,
                dotted_order=self.dotted_order,
                session_id=self.session_id,
            )
            self.tree.child_runs = self.child_runs  # shared, not copied by validation
        return self.tree


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
    if type(value) is dict:  # the common case, before the (slow) awaitable checks
        return _str_keys(value)
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
    return _str_keys(value)


def _str_keys(value: dict[Any, Any]) -> dict[str, Any]:
    for key in value:
        if not isinstance(key, str):
            return {str(key): item for key, item in value.items()}  # JSON objects have string keys
    return value
