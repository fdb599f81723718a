"""``assay run eval.toml`` and ``[tool.assay]`` in pyproject.toml: the run's flags as a file.

Keys are the long flags (``data``, ``evaluators``, ``fail_under``, ...); flags given on the
command line win over the file. Paths in the file are relative to the current directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from assay._suggest import did_you_mean
from assay.cli._common import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# key -> (kind, attribute on the parsed arguments)
_KEYS: dict[str, tuple[type, str]] = {
    "target": (str, "target"),
    "data": (str, "data"),
    "evaluators": (list, "evaluators"),
    "summary_evaluators": (list, "summary"),
    "experiment": (str, "experiment"),
    "prefix": (str, "prefix"),
    "resume": (bool, "resume"),
    "repetitions": (int, "repetitions"),
    "concurrency": (int, "concurrency"),
    "max_cost": (float, "max_cost"),
    "metadata": (dict, "metadata"),
    "fail_under": (dict, "fail_under"),
    "baseline": (str, "baseline"),
    "max_regression": (dict, "max_regression"),
    "junit_xml": (str, "junit_xml"),
    "markdown": (str, "markdown"),
    "db": (str, "db"),
}


_KINDS = {
    str: "a string",
    list: "a list",
    bool: "true or false",
    int: "an integer",
    float: "a number",
    dict: "a table",
}


def read_config(path: Path) -> dict[str, Any]:
    """The run table of ``path``: the whole file, or ``[tool.assay]`` of a pyproject.toml."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        table = document.get("tool", {}).get("assay")
        if not isinstance(table, dict):
            raise UsageError(f"{path}: no [tool.assay] table; add one, or pass MODULE:TARGET --data ...")
        return _checked(table, f"{path} [tool.assay]")
    return _checked(document.get("run", document), str(path))


def _checked(table: dict[str, Any], where: str) -> dict[str, Any]:
    checked: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        if key not in _KEYS:
            raise UsageError(
                f"{where}: unknown key {raw_key!r}{did_you_mean(key, _KEYS)}; known keys: {', '.join(_KEYS)}"
            )
        kind, _ = _KEYS[key]
        if kind is list and isinstance(value, str):
            value = [value]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # max_cost = 5 in TOML is an integer
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise UsageError(f"{where}: {raw_key} must be {_KINDS[kind]}, got {value!r}")
        checked[key] = value
    return checked


def apply_config(args: argparse.Namespace, config: dict[str, Any]) -> None:
    """Fill what the command line left unset from ``config``; list flags add up."""
    for key, value in config.items():
        attribute = _KEYS[key][1]
        current = getattr(args, attribute, None)
        if key in ("fail_under", "max_regression"):
            given = [f"{metric}={threshold}" for metric, threshold in value.items()]
            setattr(args, attribute, given + list(current or []))
        elif key == "metadata":
            given = [f"{k}={v}" for k, v in value.items()]
            setattr(args, attribute, given + list(current or []))
        elif key in ("evaluators", "summary_evaluators"):
            if not current:
                setattr(args, attribute, [str(v) for v in value])
        elif current in (None, False):
            setattr(args, attribute, value)


def find_pyproject() -> Path:
    path = Path("pyproject.toml")
    if not path.is_file():
        raise UsageError(
            "assay run needs MODULE:TARGET --data DATASET, a config file (assay run eval.toml), "
            "or a [tool.assay] table in ./pyproject.toml"
        )
    return path
