"""``RunEvaluator`` and ``BaseEvaluator``: the classes every evaluator builds on.

Subclass ``BaseEvaluator``, override ``_evaluate`` (or async ``_aevaluate``), and call the
public ``evaluate``, which never raises: an exception becomes an errored
``EvaluationResult`` carrying the traceback. Public from ``assay.evaluation.evaluator``.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
from collections.abc import Callable
from typing import Any, ClassVar

from assay._aio import run_coroutine
from assay._traceback import describe, format_traceback
from assay.evaluation._returns import normalize_returned
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

__all__ = ["BaseEvaluator", "EvaluatorOutput", "RunEvaluator"]

EvaluatorOutput = EvaluationResult | EvaluationResults


class RunEvaluator:
    """Anything with ``evaluate_run(run, example)``; async callers use ``aevaluate_run``."""

    def evaluate_run(self, run: Run, example: Example | None = None) -> EvaluatorOutput:
        raise NotImplementedError

    async def aevaluate_run(self, run: Run, example: Example | None = None) -> EvaluatorOutput:
        return await asyncio.to_thread(self.evaluate_run, run, example)


class BaseEvaluator(RunEvaluator):
    """Subclass and override ``_evaluate`` (sync) or ``_aevaluate`` (async).

    Metric metadata, as class (or instance) attributes: ``direction`` ("higher" or
    "lower" is better), ``score_range`` ((low, high), None for unbounded) and
    ``needs_outputs`` (default True: not called when the target failed, the result is
    recorded as skipped).

    Built-in evaluators (assay's own classes) refuse keyword arguments they do not know,
    so a typo fails when the evaluator is built instead of being ignored; the names they
    know are their ``__init__`` parameters along the MRO, plus ``option_names`` for
    options read from ``**kwargs``. Users' subclasses may pass anything (kept in ``config``).
    """

    direction: str | None = None
    score_range: tuple[float | None, float | None] | None = None
    needs_outputs: bool = True
    option_names: ClassVar[tuple[str, ...]] = ()

    def __init__(self, name: str | None = None, **kwargs: Any) -> None:
        if kwargs and type(self).__module__.startswith("assay."):
            _reject_unknown_options(type(self), kwargs)
        self.name = name or type(self).__name__
        self.config: dict[str, Any] = dict(kwargs)

    def _evaluate(self, run: Run, example: Example | None = None) -> Any:
        if self.is_async:
            return run_coroutine(self._aevaluate(run, example))
        raise NotImplementedError(f"{type(self).__name__} must override _evaluate or _aevaluate")

    async def _aevaluate(self, run: Run, example: Example | None = None) -> Any:
        return await asyncio.to_thread(self._evaluate, run, example)

    @property
    def is_async(self) -> bool:
        """True when the subclass implements ``_aevaluate`` itself."""
        return type(self)._aevaluate is not BaseEvaluator._aevaluate

    def evaluate(self, run: Run, example: Example | None = None) -> EvaluatorOutput:
        return self._guard(lambda: self._evaluate(run, example))

    async def aevaluate(self, run: Run, example: Example | None = None) -> EvaluatorOutput:
        try:
            raw = await self._aevaluate(run, example)
        except Exception as exc:  # failures are data
            return self.error_result(exc)
        return self._normalize(raw)

    evaluate_run = evaluate
    aevaluate_run = aevaluate

    def error_result(self, exc: BaseException) -> EvaluationResult:
        """The errored result for ``exc``: message in ``error``, traceback in metadata."""
        return EvaluationResult(
            key=self.name,
            error=describe(exc),
            metadata={"traceback": format_traceback(exc)},
        )

    def _guard(self, call: Callable[[], Any]) -> EvaluatorOutput:
        try:
            raw = call()
        except Exception as exc:  # failures are data
            return self.error_result(exc)
        return self._normalize(raw)

    def _normalize(self, raw: Any) -> EvaluatorOutput:
        try:
            results = normalize_returned(raw, default_key=self.name)
        except Exception as exc:
            return self.error_result(exc)
        if len(results) == 1:
            return results[0]
        return EvaluationResults(results=results)


def _known_options(cls: type) -> list[str]:
    known: list[str] = []
    for klass in cls.__mro__:
        known += getattr(klass, "option_names", ())
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for parameter in inspect.signature(init).parameters.values():
            if parameter.name != "self" and parameter.kind not in (
                parameter.VAR_POSITIONAL,
                parameter.VAR_KEYWORD,
            ):
                known.append(parameter.name)
    return sorted(set(known))


def _reject_unknown_options(cls: type, kwargs: dict[str, Any]) -> None:
    known = _known_options(cls)
    unknown = [name for name in kwargs if name not in known]
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        close = close or [k for k in known if name in k or k in name][:1]
        hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise TypeError(
        f"{cls.__name__}() got unknown keyword argument{'s' if len(unknown) > 1 else ''} "
        f"{', '.join(hints)}; it accepts: {', '.join(known)}"
    )
