"""Sending the target and evaluators to the workers.

Ray serializes them with cloudpickle, which sends a function by reference (the worker
imports its module) unless its module is ``__main__``. The user's own modules (a file
``assay run`` loaded by path, a module next to the script) are usually not importable
on a worker, so those are sent by value; installed packages (assay included) are
imported on the worker as usual.
"""

from __future__ import annotations

import inspect
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from assay.evaluation.executor import RowPipeline

_INSTALLED = tuple(
    str(Path(p).resolve()) for p in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
)
_STDLIB = str(Path(sysconfig.get_paths()["stdlib"]).resolve())
_DEPTH = 4


def send_user_code_by_value(pipeline: RowPipeline) -> list[str]:
    """Register the user's modules behind the pipeline's callables to travel by value;
    returns their names."""
    from ray import cloudpickle

    roots: list[Any] = [pipeline.target.fn]
    for evaluator in pipeline.evaluators:
        roots.extend([evaluator._sync, evaluator._async])
    names = sorted({m.__name__ for root in roots for m in _modules_of(root, _DEPTH) if _is_user_code(m)})
    for name in names:
        cloudpickle.register_pickle_by_value(sys.modules[name])
    return names


def _modules_of(obj: Any, depth: int) -> Iterator[ModuleType]:
    """The modules defining ``obj`` and what it wraps (closures, bound methods, partials)."""
    if obj is None or depth < 0:
        return
    if inspect.ismethod(obj):
        yield from _modules_of(obj.__func__, depth - 1)
        yield from _modules_of(type(obj.__self__), depth - 1)
        return
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    if module is None and not inspect.isfunction(obj) and not inspect.isclass(obj):
        module = sys.modules.get(type(obj).__module__)
    if module is not None:
        yield module
    for inner in (getattr(obj, "__wrapped__", None), getattr(obj, "func", None)):
        yield from _modules_of(inner, depth - 1)
    for cell in getattr(obj, "__closure__", None) or ():
        try:
            yield from _modules_of(cell.cell_contents, depth - 1)
        except ValueError:  # an empty cell
            continue


def _is_user_code(module: ModuleType) -> bool:
    name = module.__name__
    if name == "__main__" or name == "assay" or name.startswith("assay."):
        return False
    file = getattr(module, "__file__", None)
    if not file:
        return False  # built in
    path = str(Path(file).resolve())
    return not path.startswith(_INSTALLED) and not path.startswith(_STDLIB)
