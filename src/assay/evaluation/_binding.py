"""THE one place evaluator signatures are inspected.

Every evaluator form (plain function with named parameters, legacy ``(run, example)``,
``BaseEvaluator``, anything with ``evaluate_run``, a string name) becomes a
``RowEvaluator``; summary functions become ``SummaryEvaluator``s. Signatures are
checked here, once, before the experiment runs.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from assay._traceback import describe, format_traceback
from assay.errors import EvaluatorSignatureError
from assay.evaluation._attachments import fresh_attachments
from assay.evaluation._base import BaseEvaluator
from assay.evaluation._names import resolve_evaluator_name
from assay.evaluation._returns import ExpectedKeys, declared_keys, normalize_returned
from assay.evaluation.metric import MetricInfo, declaration_of
from assay.schemas import EvaluationResult, Example, Run

ROW_PARAMETERS = (
    "run",
    "example",
    "inputs",
    "outputs",
    "reference_outputs",
    "metadata",
    "attachments",
)
# A function taking any of these sees what the target produced, so by default it is not
# called when the target failed (its result is skipped); ``@assay.metric(needs_outputs=False)``
# opts in.
_OUTPUT_PARAMETERS = frozenset({"run", "outputs"})
SUMMARY_PARAMETERS = (
    "runs",
    "examples",
    "inputs",
    "outputs",
    "reference_outputs",
    "evaluation_results",
)


def row_arguments(run: Run, example: Example) -> dict[str, Any]:
    return {
        "run": run,
        "example": example,
        "inputs": example.inputs,
        "outputs": run.outputs or {},
        "reference_outputs": example.outputs or {},
        "metadata": example.metadata or {},
    }


@dataclass(frozen=True)
class _Binder:
    """How to call a function: by name with ``names``, or in the legacy form, ``names``'
    values in order: by position, or by the parameter names in ``keywords`` where one is
    keyword-only (``def ev(run, *, example)``)."""

    names: tuple[str, ...]
    positional: bool
    pass_all: bool
    keywords: tuple[str | None, ...] = ()

    def arguments(self, available: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.positional:
            values = [available[name] for name in self.names]
            if not any(self.keywords):
                return tuple(values), {}
            pairs = list(zip(values, self.keywords, strict=True))
            return tuple(v for v, k in pairs if k is None), {k: v for v, k in pairs if k is not None}
        if self.pass_all:
            return (), available
        return (), {name: available[name] for name in self.names}


def _callable_name(func: Any) -> str:
    if isinstance(func, functools.partial):
        return _callable_name(func.func)
    name = getattr(func, "__name__", None) or type(func).__name__
    return str(name)


def _binder(func: Callable[..., Any], accepted: Sequence[str], legacy: tuple[str, str]) -> _Binder:
    name = _callable_name(func)
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise EvaluatorSignatureError(f"cannot read the signature of evaluator {name!r}: {exc}") from None
    params = list(signature.parameters.values())
    pass_all = any(p.kind is p.VAR_KEYWORD for p in params)
    named = [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    known = [p.name for p in named if p.name in accepted]
    # LangSmith's legacy form: two required parameters of any names (run, example), by
    # position or keyword-only, plus options with defaults, e.g. ``def ev(r, e, *, threshold=0.5)``
    # or ``def ev(*, r, e)``.
    required = [p for p in named if p.default is p.empty]
    if not known and len(required) == 2:
        _refuse_near_misses(name, signature, [p.name for p in required], accepted, legacy)
        keywords = tuple(p.name if p.kind is p.KEYWORD_ONLY else None for p in required)
        return _Binder(names=legacy, positional=True, pass_all=False, keywords=keywords)
    positional_only = [p.name for p in named if p.kind is p.POSITIONAL_ONLY and p.name in accepted]
    if positional_only:
        raise EvaluatorSignatureError(
            f"evaluator {name!r} has the signature {name}{signature}: assay passes "
            f"{', '.join(repr(n) for n in positional_only)} by name, so they cannot be "
            "positional-only (drop the '/')"
        )
    unknown = [p.name for p in named if p.name not in accepted and p.default is p.empty]
    if unknown:
        raise EvaluatorSignatureError(
            f"evaluator {name!r} has the signature {name}{signature}, but assay cannot bind "
            f"{', '.join(repr(u) for u in unknown) or 'its parameters'}. Accepted parameter names: "
            f"{', '.join(accepted)}; or exactly two positional parameters "
            f"({legacy[0]}, {legacy[1]})."
        )
    if not known and not pass_all:
        raise EvaluatorSignatureError(
            f"evaluator {name!r} has the signature {name}{signature}, which takes none of the "
            f"accepted parameter names: {', '.join(accepted)}"
        )
    return _Binder(names=tuple(known), positional=False, pass_all=pass_all)


# Names people write for the bindable ones. Bound the legacy way (a Run and an Example) they
# would compare a Run with an Example and score 0 on every row, with no error to say why.
_MEANT = {
    "output": "outputs",
    "prediction": "outputs",
    "predictions": "outputs",
    "predicted": "outputs",
    "actual": "outputs",
    "input": "inputs",
    "reference": "reference_outputs",
    "references": "reference_outputs",
    "reference_output": "reference_outputs",
    "expected": "reference_outputs",
    "expected_output": "reference_outputs",
    "expected_outputs": "reference_outputs",
    "target": "reference_outputs",
    "label": "reference_outputs",
    "ground_truth": "reference_outputs",
}


def _meant(param: str, accepted: Sequence[str], legacy: tuple[str, str]) -> str | None:
    """The bindable name ``param`` is most likely a slip for, if it clearly is one."""
    if param in _MEANT and _MEANT[param] in accepted:
        return _MEANT[param]
    candidates = [name for name in accepted if name not in legacy]
    close = difflib.get_close_matches(param, candidates, n=1, cutoff=0.8)
    return close[0] if close else None


def _refuse_near_misses(
    name: str,
    signature: inspect.Signature,
    params: list[str],
    accepted: Sequence[str],
    legacy: tuple[str, str],
) -> None:
    """Two positional parameters are LangSmith's legacy ``(run, example)`` form, whatever
    their names; unless the names are near misses of bindable ones (``output``,
    ``reference``): then the author meant the named form, and binding silently is wrong."""
    meant = [_meant(param, accepted, legacy) for param in params]
    if not any(meant):
        return
    slips = ", ".join(f"{param!r} (did you mean {m!r}?)" for param, m in zip(params, meant) if m)
    raise EvaluatorSignatureError(
        f"evaluator {name!r} has the signature {name}{signature}: {slips}. assay binds parameters "
        f"by name: {', '.join(accepted)}. For LangSmith's legacy form (a Run and an Example), "
        f"name them ({legacy[0]}, {legacy[1]})."
    )


def _error_result(key: str, exc: BaseException, run_id: uuid.UUID | None = None) -> EvaluationResult:
    return EvaluationResult(
        key=key,
        error=describe(exc),
        metadata={"traceback": format_traceback(exc)},
        source_run_id=run_id,
    )


def _is_async_callable(func: Any) -> bool:
    while isinstance(func, functools.partial):
        func = func.func
    call = func.__call__ if not inspect.isfunction(func) and callable(func) else None
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(call)


def skipped_result(key: str, run: Run) -> EvaluationResult:
    """The outcome of an evaluator that needs outputs on a row whose target failed."""
    return EvaluationResult(
        key=key,
        comment="skipped: the target failed",
        metadata={"skipped": True},
        source_run_id=run.id,
    )


@dataclass(frozen=True)
class RowEvaluator:
    """A row evaluator ready to call: ``call_sync`` or ``call_async`` per ``is_async``.

    With ``needs_outputs`` it is not called on a failed target (the result is skipped);
    ``info`` (declared metric metadata) is stamped on each result that declares none."""

    name: str
    is_async: bool
    _sync: Callable[[Run, Example], Any] | None = None
    _async: Callable[[Run, Example], Any] | None = None
    needs_outputs: bool = True
    info: MetricInfo | None = None
    expected: ExpectedKeys | None = None  # None: its name, and the keys it answers with

    def __post_init__(self) -> None:
        if self.expected is None:
            object.__setattr__(self, "expected", ExpectedKeys(self.name))

    def call_sync(self, run: Run, example: Example) -> list[EvaluationResult]:
        assert self._sync is not None and self.expected is not None
        if self.needs_outputs and run.error is not None:
            return [skipped_result(self.name, run)]
        try:
            results = self.expected.results_of(self._sync(run, example), run)
        except Exception as exc:  # failures are data
            results = [_error_result(self.name, exc, run.id)]
        # Most evaluators declare nothing: no call per row to stamp nothing.
        return results if self.info is None else self._declared(results)

    async def call_async(self, run: Run, example: Example) -> list[EvaluationResult]:
        assert self._async is not None and self.expected is not None
        if self.needs_outputs and run.error is not None:
            return [skipped_result(self.name, run)]
        try:
            returned = await self._async(run, example)
            results = normalize_returned(returned, self.name, run.id)
            return self._declared(self.expected.complete(results, run))
        except Exception as exc:  # failures are data
            return self._declared([_error_result(self.name, exc, run.id)])

    def _declared(self, results: list[EvaluationResult]) -> list[EvaluationResult]:
        if self.info is not None:
            stamp = self.info.as_info()
            for result in results:
                if "direction" not in result.evaluator_info:
                    result.evaluator_info = {**stamp, **result.evaluator_info}
        return results


def bind_row_evaluator(evaluator: Any) -> RowEvaluator:
    if isinstance(evaluator, str):
        evaluator = resolve_evaluator_name(evaluator)
    declared = declaration_of(evaluator)
    needs = declared.needs_outputs is not False
    if isinstance(evaluator, BaseEvaluator):
        expected = ExpectedKeys(evaluator.name, declared_keys(evaluator))
        if evaluator.is_async:
            call: dict[str, Any] = {"_async": evaluator.aevaluate}
        else:
            call = {"_sync": evaluator.evaluate}
        return RowEvaluator(
            evaluator.name,
            evaluator.is_async,
            **call,
            needs_outputs=needs,
            info=declared.info,
            expected=expected,
        )
    if hasattr(evaluator, "evaluate_run"):
        name = getattr(evaluator, "name", None) or type(evaluator).__name__
        return RowEvaluator(
            str(name), False, _sync=evaluator.evaluate_run, needs_outputs=needs, info=declared.info
        )
    if not callable(evaluator):
        raise EvaluatorSignatureError(
            f"evaluator {evaluator!r} is not callable; pass a function, a BaseEvaluator, "
            "an object with evaluate_run(run, example), or a built-in evaluator name"
        )
    return _bind_row_function(evaluator)


# Each bindable parameter's value, as an expression of the row's ``run`` and ``example``.
_ROW_VALUES: dict[str, str] = {
    "run": "run",
    "example": "example",
    "inputs": "example.inputs",
    "outputs": "run.outputs or {}",
    "reference_outputs": "example.outputs or {}",
    "metadata": "example.metadata or {}",
    "attachments": "_fresh_attachments(example.attachments)",
}


def _bind_row_function(func: Callable[..., Any]) -> RowEvaluator:
    binder = _binder(func, ROW_PARAMETERS, ("run", "example"))
    name = _callable_name(func)
    call = _row_call(func, binder)
    declared = declaration_of(func)
    sees_outputs = binder.positional or binder.pass_all or bool(_OUTPUT_PARAMETERS & set(binder.names))
    needs = sees_outputs if declared.needs_outputs is None else declared.needs_outputs
    near = _near_misses(func) if binder.positional else None
    if _is_async_callable(func):
        call_async = _explain_async(call, name, near) if near else call
        return RowEvaluator(name, True, _async=call_async, needs_outputs=needs, info=declared.info)
    call_sync = _explain_sync(call, name, near) if near else call
    return RowEvaluator(name, False, _sync=call_sync, needs_outputs=needs, info=declared.info)


def _call_legacy(func: Callable[..., Any], binder: _Binder, run: Run, example: Example) -> Any:
    """``(run, example)`` passed to a legacy evaluator with a keyword-only parameter."""
    args, kwargs = binder.arguments({"run": run, "example": example})
    return func(*args, **kwargs)


def _row_call(func: Callable[..., Any], binder: _Binder) -> Callable[[Run, Example], Any]:
    """How one row calls ``func``: built once per evaluator, so a row pays only for the
    arguments it passes."""
    if binder.positional:
        if not any(binder.keywords):
            return func
        return lambda run, example: _call_legacy(func, binder, run, example)
    if binder.pass_all:
        return lambda run, example: func(**row_arguments(run, example))
    return _keyword_call(func, binder.names)


def _keyword_call(func: Callable[..., Any], names: tuple[str, ...]) -> Callable[[Run, Example], Any]:
    """``func`` called with ``names`` by keyword, each value read from the row in place:
    a function written for them (as ``dataclasses`` writes ``__init__``), so a row pays
    for one call and the reads, not a call per argument and a dict of them."""
    arguments = ", ".join(f"{name}=({_ROW_VALUES[name]})" for name in names)
    source = f"def call(run, example):\n    return _func({arguments})\n"
    scope: dict[str, Any] = {"_func": func, "_fresh_attachments": fresh_attachments}
    # the file name a traceback through this call shows
    exec(compile(source, f"<assay: a row's call of {_callable_name(func)}>", "exec"), scope)  # noqa: S102
    call: Callable[[Run, Example], Any] = scope["call"]
    return call


def _near_misses(func: Callable[..., Any]) -> str | None:
    """For a legacy-form function whose parameter names look like the bindable ones
    (``def correct(output, reference)``): the names it probably meant."""
    names = list(inspect.signature(func).parameters)
    meant = [difflib.get_close_matches(n, ROW_PARAMETERS, n=1, cutoff=0.6) for n in names]
    if not any(meant) or any(n in ("run", "example") for n in names):
        return None
    return ", ".join(m[0] if m else n for n, m in zip(names, meant))


def _legacy_error(name: str, near: str, exc: Exception) -> TypeError:
    return TypeError(
        f"evaluator {name!r} was called the legacy way, with a Run and an Example, because its "
        f"two parameters are not names assay binds; did you mean ({near})? Accepted parameter "
        f"names: {', '.join(ROW_PARAMETERS)}. The call failed with {type(exc).__name__}: {exc}"
    )


def _explain_sync(call: Callable[[Run, Example], Any], name: str, near: str) -> Callable[[Run, Example], Any]:
    def explained(run: Run, example: Example) -> Any:
        try:
            return call(run, example)
        except (TypeError, AttributeError, KeyError) as exc:
            raise _legacy_error(name, near, exc) from exc

    return explained


def _explain_async(
    call: Callable[[Run, Example], Any], name: str, near: str
) -> Callable[[Run, Example], Any]:
    async def explained(run: Run, example: Example) -> Any:
        try:
            return await call(run, example)
        except (TypeError, AttributeError, KeyError) as exc:
            raise _legacy_error(name, near, exc) from exc

    return explained


@dataclass(frozen=True)
class SummaryEvaluator:
    name: str
    func: Callable[..., Any]
    binder: _Binder

    def call_sync(self, available: dict[str, Any]) -> list[EvaluationResult]:
        try:
            args, kwargs = self.binder.arguments(available)
            return normalize_returned(self.func(*args, **kwargs), self.name)
        except Exception as exc:  # failures are data
            return [_error_result(self.name, exc)]

    async def call_async(self, available: dict[str, Any]) -> list[EvaluationResult]:
        try:
            args, kwargs = self.binder.arguments(available)
            return normalize_returned(await self.func(*args, **kwargs), self.name)
        except Exception as exc:  # failures are data
            return [_error_result(self.name, exc)]

    @property
    def is_async(self) -> bool:
        return _is_async_callable(self.func)


def bind_summary_evaluator(func: Any) -> SummaryEvaluator:
    if not callable(func):
        raise EvaluatorSignatureError(f"summary evaluator {func!r} is not callable")
    binder = _binder(func, SUMMARY_PARAMETERS, ("runs", "examples"))
    return SummaryEvaluator(name=_callable_name(func), func=func, binder=binder)
