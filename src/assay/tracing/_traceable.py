"""``@traceable``: record each call of a function as a run, nested under the current one.

Accepts LangSmith's forms: ``@traceable``, ``@traceable("llm")``, ``@traceable(run_type=...,
name=..., metadata=..., tags=..., process_inputs=..., process_outputs=..., reduce_fn=...)``,
and per call ``fn(..., langsmith_extra={...})`` (its metadata reaches nested runs), plus
``process_chunk``, ``enabled`` and ``exceptions_to_handle``. A function with a ``run_tree``
parameter receives its run. Streams (generators, and iterators returned with ``reduce_fn``)
are recorded as described in ``_streams``.
"""

from __future__ import annotations

import functools
import inspect
import typing
import warnings
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, overload

from assay.schemas import Attachment, utcnow
from assay.tracing._context import (
    TracingSettings,
    current_parent,
    current_settings,
    default_project,
    reset_current_run,
    reset_settings,
    set_current_run,
    set_settings,
    starts_a_stored_trace,
    store_trace,
    traces_kept_in_memory,
    tracing_on,
)
from assay.tracing._streams import TracedAsyncStream, TracedStream, drive_async_generator, drive_generator
from assay.tracing.run_tree import RunTree

F = TypeVar("F", bound=Callable[..., Any])

RUN_TYPES = frozenset({"tool", "chain", "llm", "retriever", "embedding", "prompt", "parser"})
_EXTRA_KEYS = frozenset(
    {
        "name",
        "metadata",
        "tags",
        "run_id",
        "parent",
        "run_tree",
        "project_name",
        "reference_example_id",
        "on_end",
        "client",
        "run_extra",
        "attachments",
        "invocation_params_fn",
    }
)


@dataclass(frozen=True)
class _Config:
    name: str
    run_type: str
    metadata: dict[str, Any]
    tags: tuple[str, ...]
    project_name: str | None
    process_inputs: Callable[[dict[str, Any]], dict[str, Any]] | None
    process_outputs: Callable[..., dict[str, Any]] | None
    reduce_fn: Callable[[list[Any]], Any] | None
    process_chunk: Callable[[Any], Any] | None = None
    enabled: bool | None = None
    exceptions_to_handle: tuple[type[BaseException], ...] = ()
    client: Any | None = None  # where this call's trace is stored, when it is a root
    allow_files: bool = False  # dangerously_allow_filesystem: attachments given as paths are read


def call_inputs(
    signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The call's arguments by parameter name, defaults filled in, ``**kwargs`` flattened."""
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError:
        return {"args": list(args), **kwargs}
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    for receiver in ("self", "cls", "run_tree"):  # not inputs worth recording
        arguments.pop(receiver, None)
    for name, parameter in signature.parameters.items():
        if parameter.kind is parameter.VAR_KEYWORD and isinstance(arguments.get(name), dict):
            arguments.update(arguments.pop(name))
    return arguments


def attachment_params(fn: Callable[..., Any], signature: inspect.Signature) -> frozenset[str]:
    """Parameters annotated ``Attachment`` or ``Annotated[..., Attachment]``: their arguments
    are the run's attachments, not its inputs (LangSmith's rule). A string annotation is
    resolved; one that cannot be is not an attachment."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # an unresolvable forward reference: read the annotations as written
        hints = {name: p.annotation for name, p in signature.parameters.items()}
    return frozenset(
        name for name in signature.parameters if _is_attachment_type(hints.get(name, inspect.Parameter.empty))
    )


def _is_attachment_type(annotation: Any) -> bool:
    if annotation is Attachment:
        return True
    return typing.get_origin(annotation) is typing.Annotated and Attachment in typing.get_args(annotation)


def as_outputs(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"output": value}


class Call:
    """One traced call: starts the run, makes it current (with the call's metadata passed
    on to the runs inside it), and ends it."""

    def __init__(
        self,
        config: _Config,
        inputs: dict[str, Any],
        attachments: dict[str, Any],
        extra: dict[str, Any],
    ) -> None:
        self.on_end = extra.get("on_end")
        self.config = config
        self.chunks: list[Any] = []
        self.run = _start(config, inputs, attachments, extra)
        self._stored_in = _trace_destination(config, extra, self.run)
        self._inherited = _inherited_settings(extra)
        self._tokens: tuple[Any, Any] | None = None
        self.resume()

    def finish(self, result: Any = None, error: BaseException | None = None) -> None:
        self.suspend()
        run = self.run
        if run is None or run.end_time is not None:
            return
        if error is not None and not isinstance(error, self.config.exceptions_to_handle):
            run.end(error=f"{type(error).__name__}: {error}")
        elif error is None:
            process = self.config.process_outputs
            run.end(outputs=process(result) if process else as_outputs(result))
        else:  # an exception the function's owner handles: not the run's error
            run.end()
        if callable(self.on_end):
            self.on_end(run)
        if self._stored_in is not None:
            store_trace(run, self._stored_in[0], self.config.allow_files)

    def add_chunk(self, item: Any) -> None:
        """An item a stream produced, as ``process_chunk`` makes it; an LLM run's first
        one is also its ``new_token`` event."""
        chunk = self.config.process_chunk(item) if self.config.process_chunk else item
        if self.run is not None and self.config.run_type == "llm" and not self.chunks:
            self.run.add_event(
                {"name": "new_token", "time": utcnow().isoformat(), "kwargs": {"token": chunk}}
            )
        self.chunks.append(chunk)

    def finish_stream(self, returned: Any = None, error: BaseException | None = None) -> None:
        """End a stream's run with what it produced (kept on error too) and its return value."""
        if returned is not None:
            self.chunks.append(returned)
        if error is not None and self.run is not None and self.chunks:
            self.run.add_outputs(as_outputs(self.collected(self.chunks)))
        self.finish(self.collected(self.chunks), error)

    def suspend(self) -> None:
        """Control goes back to the caller (a generator yields; the call ends)."""
        if self._tokens is not None:
            run_token, settings_token = self._tokens
            if settings_token is not None:
                reset_settings(settings_token)
            if run_token is not None:
                reset_current_run(run_token)
            self._tokens = None

    def resume(self) -> None:
        if self._tokens is not None:
            return
        if self.run is not None:
            settings = set_settings(self._inherited) if self._inherited is not None else None
            self._tokens = (set_current_run(self.run), settings)
        elif self.config.enabled is False:  # not traced on purpose: hides its caller's run too
            self._tokens = (set_current_run(None), None)

    def collected(self, items: list[Any]) -> Any:
        return self.config.reduce_fn(items) if self.config.reduce_fn else items


def _trace_destination(config: _Config, extra: dict[str, Any], run: RunTree | None) -> tuple[Any] | None:
    """``(client or None,)`` when this call's run is a root whose trace is stored as it
    ends (tracing is on); None for a run inside another (an experiment's row included),
    and for an evaluator's calls while an experiment runs (kept in memory, as ever)."""
    if run is None or not starts_a_stored_trace(run):
        return None
    settings = current_settings()
    if not tracing_on(config.enabled, settings.enabled) or traces_kept_in_memory():
        return None
    return (extra.get("client") or config.client or settings.client,)


def _inherited_settings(extra: dict[str, Any]) -> TracingSettings | None:
    """A call's own metadata (``langsmith_extra``) reaches the runs nested in it."""
    metadata = extra.get("metadata")
    if not metadata:
        return None
    settings = current_settings()
    return replace(settings, metadata={**metadata, **settings.metadata})


def _start(
    config: _Config, inputs: dict[str, Any], attachments: dict[str, Any], extra: dict[str, Any]
) -> RunTree | None:
    settings = current_settings()
    if config.enabled is False or (settings.enabled is False and config.enabled is not True):
        return None
    unknown = set(extra) - _EXTRA_KEYS
    if unknown:
        raise TypeError(f"langsmith_extra has unknown keys {sorted(unknown)}; known: {sorted(_EXTRA_KEYS)}")
    parent = extra.get("parent") or extra.get("run_tree") or current_parent()
    metadata = {**settings.metadata, **config.metadata, **(extra.get("metadata") or {})}
    run_extra = dict(extra.get("run_extra") or {})
    if metadata:
        run_extra["metadata"] = {**run_extra.get("metadata", {}), **metadata}
    fields: dict[str, Any] = {
        "name": extra.get("name") or config.name,
        "run_type": config.run_type,
        "inputs": config.process_inputs(inputs) if config.process_inputs else inputs,
        "extra": run_extra,
        "tags": [*settings.tags, *config.tags, *(extra.get("tags") or [])],
        "parent_run": parent,
        "reference_example_id": extra.get("reference_example_id"),
        "session_name": extra.get("project_name")
        or config.project_name
        or settings.project_name
        or getattr(parent, "session_name", None)
        or default_project(),
        "attachments": {**attachments, **(extra.get("attachments") or {})},
    }
    if extra.get("run_id") is not None:
        fields["id"] = extra["run_id"]
    run = RunTree(**fields)
    if parent is not None:
        parent.child_runs.append(run)
    return run


def _pop_extra(kwargs: dict[str, Any]) -> dict[str, Any]:
    extra = kwargs.pop("langsmith_extra", None) or {}
    if not isinstance(extra, dict):
        raise TypeError(f"langsmith_extra must be a dict, got {type(extra).__name__}")
    return extra


def _wrap(fn: Callable[..., Any], config: _Config) -> Callable[..., Any]:
    signature = inspect.signature(fn)
    takes_run_tree = "run_tree" in signature.parameters
    # resolved at the first call: a string annotation may name what is defined after ``fn``
    attachment_names = functools.cache(lambda: attachment_params(fn, signature))

    def begin(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call:
        extra = _pop_extra(kwargs)
        inputs = call_inputs(signature, args, kwargs)
        attachments = {name: inputs.pop(name) for name in attachment_names() if name in inputs}
        call = Call(config, inputs, attachments, extra)
        if takes_run_tree:  # LangSmith hands the function its own run
            kwargs["run_tree"] = call.run
        return call

    if inspect.isasyncgenfunction(fn):

        @functools.wraps(fn)
        async def async_gen_wrapper(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            call = begin(args, kwargs)
            async for item in drive_async_generator(call, fn(*args, **kwargs)):
                yield item

        return async_gen_wrapper

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def gen_wrapper(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
            call = begin(args, kwargs)
            try:
                generator = fn(*args, **kwargs)
            except BaseException as exc:
                call.finish(error=exc)
                raise
            return (yield from drive_generator(call, generator))

        return gen_wrapper

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            call = begin(args, kwargs)
            try:
                result = await fn(*args, **kwargs)
            except BaseException as exc:
                call.finish(error=exc)
                raise
            return _finish_or_stream(call, result)

        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        call = begin(args, kwargs)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            call.finish(error=exc)
            raise
        return _finish_or_stream(call, result)

    return wrapper


def _finish_or_stream(call: Call, result: Any) -> Any:
    """With ``reduce_fn``, an iterator the function returns is the output as it is consumed
    (the run ends with it); anything else ends the run now."""
    if call.config.reduce_fn is not None and call.run is not None:
        if isinstance(result, Iterator) or _is_stream_resource(result):
            call.suspend()
            return TracedStream(call, result)
        if isinstance(result, AsyncIterator):
            call.suspend()
            return TracedAsyncStream(call, result)
    call.finish(result)
    return result


def _is_stream_resource(value: Any) -> bool:
    """An iterable that is also a context manager (an SDK's stream object), as LangSmith
    wraps it; plain containers (a list, a dict) stay outputs."""
    return isinstance(value, Iterable) and hasattr(value, "__exit__")


@overload
def traceable(func: F) -> F: ...
@overload
def traceable(
    run_type: str = "chain",
    *,
    name: str | None = None,
    metadata: dict[str, Any] | None = None,
    tags: Sequence[str] | None = None,
    project_name: str | None = None,
    process_inputs: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    process_outputs: Callable[..., dict[str, Any]] | None = None,
    reduce_fn: Callable[[list[Any]], Any] | None = None,
    process_chunk: Callable[[Any], Any] | None = None,
    enabled: bool | None = None,
    exceptions_to_handle: tuple[type[BaseException], ...] | None = None,
    **ignored: Any,
) -> Callable[[F], F]: ...


def traceable(*args: Any, **kwargs: Any) -> Any:
    """Decorate a function (sync, async, generator) so each call is recorded as a run.

    ``@traceable``, ``@traceable("llm")`` and ``@traceable(run_type="llm", ...)`` all work;
    A root call's trace is stored as it ends when tracing is on (``LANGSMITH_TRACING=true``,
    ``enabled=True``, ``tracing_context(enabled=True)``): in ``client``'s store, else the
    default one; ``dangerously_allow_filesystem=True`` lets attachments given as paths be
    read then.
    """
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return _decorator("chain", {})(args[0])
    if args and not isinstance(args[0], str):
        raise TypeError(
            f"traceable takes a run type string positionally, e.g. @traceable('llm'); got {args!r}"
        )
    if len(args) > 1:  # LangSmith warns and goes on; so does assay
        warnings.warn(
            f"traceable only accepts one positional argument, the run type; ignoring {args[1:]!r} "
            "(pass name=... by keyword)",
            UserWarning,
            stacklevel=2,
        )
    run_type = args[0] if args else kwargs.pop("run_type", "chain")
    if run_type not in RUN_TYPES:
        warnings.warn(
            f"Unrecognized run_type: {run_type}. Must be one of: {', '.join(sorted(RUN_TYPES))}. "
            f"Did you mean @traceable(name={run_type!r})?",
            UserWarning,
            stacklevel=2,
        )
    return _decorator(run_type, kwargs)


def _decorator(run_type: str, options: dict[str, Any]) -> Callable[[F], F]:
    def decorate(fn: F) -> F:
        config = _Config(
            name=options.get("name") or str(getattr(fn, "__name__", "traceable")),
            run_type=run_type,
            metadata=dict(options.get("metadata") or {}),
            tags=tuple(options.get("tags") or ()),
            project_name=options.get("project_name"),
            process_inputs=options.get("process_inputs"),
            process_outputs=options.get("process_outputs"),
            reduce_fn=options.get("reduce_fn"),
            process_chunk=options.get("process_chunk"),
            enabled=options.get("enabled"),
            exceptions_to_handle=tuple(options.get("exceptions_to_handle") or ()),
            client=options.get("client"),
            allow_files=bool(options.get("dangerously_allow_filesystem")),
        )
        wrapped = _wrap(fn, config)
        wrapped.__assay_traceable__ = True  # type: ignore[attr-defined]
        wrapped.__traceable_config__ = {  # type: ignore[attr-defined]
            "process_inputs": config.process_inputs,
            "process_outputs": config.process_outputs,
            "enabled": config.enabled,
            "tags": options.get("tags"),  # as given: None when not given, as in LangSmith
            "metadata": options.get("metadata"),
            "wrapped": fn,
        }
        return wrapped  # type: ignore[return-value]

    return decorate


def is_traceable_function(func: Any) -> bool:
    """Whether ``func`` (or the function under a ``functools.partial``, or an object's
    ``__call__``) was decorated with ``@traceable``."""
    while isinstance(func, functools.partial):
        func = func.func
    if getattr(func, "__assay_traceable__", False):
        return True
    call = vars(type(func)).get("__call__")  # an instance whose class's __call__ is traced
    return bool(getattr(call, "__assay_traceable__", False))
