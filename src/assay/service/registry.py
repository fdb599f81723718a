"""Which evaluators a service serves: ``MODULE:ATTRIBUTE`` in the user's code, or the built-ins.

``MODULE:ATTRIBUTE`` names a dict (name -> evaluator) or a list/tuple (each named by its
``name`` or function name) in a module imported from the current directory. Every
evaluator is bound once, here, with the same binding ``evaluate()`` uses, so a bad
signature stops the server before it listens.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from assay.errors import EvaluatorSpecError
from assay.evaluation.evaluator import RowEvaluator, bind_row_evaluator

__all__ = ["load_evaluators", "named_evaluators"]


def load_evaluators(spec: str) -> dict[str, RowEvaluator]:
    """The evaluators ``spec`` (``"module:attribute"``) names, bound and keyed by name."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise EvaluatorSpecError(
            f"evaluators {spec!r}: expected MODULE:EVALUATORS, e.g. my_evals:EVALUATORS "
            "(a dict or list in my_evals.py in the current directory), or --builtin"
        )
    module = _import_from_cwd(module_name, spec)
    try:
        found = getattr(module, attribute)
    except AttributeError:
        raise EvaluatorSpecError(
            f"evaluators {spec!r}: module {module_name!r} ({_where(module)}) has no attribute {attribute!r}"
        ) from None
    if callable(found) and not isinstance(found, (Mapping, list, tuple)) and _is_factory(found):
        found = found()
    return named_evaluators(found, spec)


def named_evaluators(found: Any, spec: str) -> dict[str, RowEvaluator]:
    """Bind a dict (name -> evaluator) or a sequence of evaluators; names must be unique."""
    if isinstance(found, Mapping):
        pairs: Iterable[tuple[str | None, Any]] = found.items()
    elif isinstance(found, (list, tuple)):
        pairs = ((None, evaluator) for evaluator in found)
    else:
        raise EvaluatorSpecError(
            f"evaluators {spec!r} is a {type(found).__name__}; expected a dict of "
            "name -> evaluator or a list of evaluators"
        )
    bound: dict[str, RowEvaluator] = {}
    for given, evaluator in pairs:
        row_evaluator = bind_row_evaluator(evaluator)
        name = str(given) if given is not None else row_evaluator.name
        if name in bound:
            raise EvaluatorSpecError(f"evaluators {spec!r}: two evaluators are named {name!r}")
        bound[name] = row_evaluator
    if not bound:
        raise EvaluatorSpecError(f"evaluators {spec!r} is empty: nothing to serve")
    return bound


def _import_from_cwd(module_name: str, spec: str) -> Any:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)  # as `python -m` does: the user's module is beside them
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise EvaluatorSpecError(
                f"evaluators {spec!r}: no module {module_name!r} in {cwd} or on the Python path"
            ) from None
        raise


def _is_factory(found: Any) -> bool:
    """A zero-argument function returning the set (so a module can build it lazily)."""
    try:
        return not inspect.signature(found).parameters
    except (TypeError, ValueError):
        return False


def _where(module: Any) -> str:
    return str(getattr(module, "__file__", None) or module.__name__)
