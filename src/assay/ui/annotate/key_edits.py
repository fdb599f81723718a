"""Editing a level's feedback keys (an experiment's or a dataset's ``feedback_keys``):
define a key, rename one, delete one. Each edit gives the new definition list, checked
by ``parse_keys`` as a hand-written one is, so a bad edit is refused with its reason
and nothing is stored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.ui.annotate.keys import parse_keys
from assay.ui.errors import BadRequest

__all__ = ["ACTIONS", "edited_keys"]

ACTIONS = ("define", "rename", "delete")


def edited_keys(
    current: list[dict[str, Any]], form: Mapping[str, str], where: str
) -> list[dict[str, Any]] | None:
    """The definitions after the form's edit (None: none left, the level defines no keys)."""
    action = form.get("action", "")
    if action == "define":
        found = [*current, _definition(form)]
    elif action == "rename":
        found = [_renamed(entry, form) for entry in _existing(current, form)]
    elif action == "delete":
        name = _named(current, form.get("key", ""))
        found = [entry for entry in current if entry.get("key") != name]
    else:
        raise BadRequest(f"parameter 'action' must be one of {', '.join(ACTIONS)}; got {action!r}")
    if not found:
        return None
    parse_keys(found, where)  # refused as a hand-written definition would be
    return found


def _definition(form: Mapping[str, str]) -> dict[str, Any]:
    kind = form.get("kind", "thumbs")
    entry: dict[str, Any] = {"key": form.get("key", "").strip(), "kind": kind}
    if kind == "scale":
        entry.update(min=_number(form, "min", 1), max=_number(form, "max", 5), step=_number(form, "step", 1))
    elif kind == "label":
        entry["labels"] = [label.strip() for label in form.get("labels", "").split(",") if label.strip()]
    return entry


def _number(form: Mapping[str, str], name: str, default: float) -> float | int:
    text = form.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise BadRequest(f"parameter {name!r} must be a number; got {text!r}") from None
    return int(value) if value.is_integer() else value


def _existing(current: list[dict[str, Any]], form: Mapping[str, str]) -> list[dict[str, Any]]:
    _named(current, form.get("key", ""))
    return current


def _renamed(entry: dict[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    if entry.get("key") != form.get("key"):
        return entry
    return {**entry, "key": form.get("new_key", "").strip()}


def _named(current: list[dict[str, Any]], name: str) -> str:
    if not any(entry.get("key") == name for entry in current):
        known = ", ".join(str(entry.get("key")) for entry in current) or "none"
        raise BadRequest(f"no feedback key {name!r} is defined here (defined: {known})")
    return name
