"""Importing the user's code named ``MODULE:ATTRIBUTE``, from the current directory as pytest does."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from assay._suggest import did_you_mean
from assay.cli._common import UsageError


def load_object(spec: str, what: str) -> Any:
    """``pkg.module:name`` or ``path/to/file.py:name``; errors name the module and attribute."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(f"{what} {spec!r} must be MODULE:NAME, e.g. my_app:answer or evals/app.py:answer")
    module = _import(module_name, what, spec)
    obj: Any = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            where = getattr(module, "__file__", None) or module_name
            raise UsageError(
                f"{what} {spec!r}: module {module_name!r} ({where}) has no attribute {part!r}"
                + did_you_mean(part, names)
            )
        obj = getattr(obj, part)
    return obj


def _import(module_name: str, what: str, spec: str) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    if module_name.endswith(".py"):
        return _import_file(Path(module_name), what, spec)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name) and _top_level_missing(module_name, exc.name):
            raise UsageError(
                f"{what} {spec!r}: no module named {exc.name!r} in {cwd} or on the Python path"
            ) from None
        raise UsageError(_failed_import(module_name, exc)) from None
    except Exception as exc:
        raise UsageError(_failed_import(module_name, exc)) from None


def _top_level_missing(module_name: str, missing: str) -> bool:
    """The named module (or a parent package) is missing, not something it imports."""
    return module_name == missing or module_name.startswith(missing + ".")


def _import_file(path: Path, what: str, spec: str) -> ModuleType:
    if not path.is_file():
        raise UsageError(f"{what} {spec!r}: no such file {path}")
    sys.path.insert(0, str(path.resolve().parent))
    name = path.stem
    module_spec = importlib.util.spec_from_file_location(name, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        raise UsageError(_failed_import(str(path), exc)) from None
    return module


def _failed_import(module_name: str, exc: BaseException) -> str:
    """The user's own error while importing: its type, message and the line it came from."""
    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if "importlib" not in f.filename]
    where = f" ({user[-1].filename}, line {user[-1].lineno})" if user else ""
    return f"importing {module_name!r} failed: {type(exc).__name__}: {exc}{where}"
