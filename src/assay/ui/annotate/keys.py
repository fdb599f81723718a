"""Feedback keys: what a person may score on a row, defined per experiment or dataset.

A definition lives in the experiment's metadata (``feedback_keys``), else its dataset's,
else the default: one thumbs key named ``human``. Each entry is one of

- ``{"key": "helpful", "kind": "thumbs"}``: up (score 1) or down (score 0);
- ``{"key": "quality", "kind": "scale", "min": 1, "max": 5}``: an integer from min to max;
- ``{"key": "faithful", "kind": "scale", "min": 0, "max": 1, "step": 0.25}``: a number on a grid;
- ``{"key": "category", "kind": "label", "labels": ["ok", "wrong", "harmful"]}``: one label
  (the label is the feedback's value; it has no score).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from assay.ui.errors import BadRequest

__all__ = ["DEFAULT_KEYS", "Choice", "FeedbackKey", "keys_from_metadata", "parse_keys"]

Kind = Literal["thumbs", "scale", "label"]
MAX_CHOICES = 20
KEY_CHARS = 64


@dataclass(frozen=True)
class Choice:
    """One option a person can pick: what the page shows, and what is stored."""

    text: str
    score: float | int | None
    value: Any


@dataclass(frozen=True)
class FeedbackKey:
    key: str
    kind: Kind
    choices: tuple[Choice, ...]

    def choice(self, given: str) -> Choice:
        """The choice whose text is ``given``, else a BadRequest naming the accepted ones."""
        for choice in self.choices:
            if choice.text == given:
                return choice
        accepted = ", ".join(c.text for c in self.choices)
        raise BadRequest(f"feedback key {self.key!r} accepts {accepted}; got {given!r}")

    @property
    def scored(self) -> bool:
        return self.kind != "label"


def _thumbs(key: str) -> FeedbackKey:
    return FeedbackKey(key, "thumbs", (Choice("up", 1, "up"), Choice("down", 0, "down")))


DEFAULT_KEYS = (_thumbs("human"),)


def keys_from_metadata(*metadata: Any) -> tuple[FeedbackKey, ...]:
    """The first ``feedback_keys`` found in ``metadata`` (the experiment's, then the dataset's)."""
    for where, found in metadata:
        if isinstance(found, dict) and "feedback_keys" in found:
            return parse_keys(found["feedback_keys"], where)
    return DEFAULT_KEYS


def parse_keys(raw: Any, where: str) -> tuple[FeedbackKey, ...]:
    """Definitions from their JSON form; a bad entry raises naming ``where`` and its index."""
    if not isinstance(raw, list) or not raw:
        raise BadRequest(f"{where} feedback_keys must be a non-empty list of key definitions")
    keys = tuple(_parse_one(entry, f"{where} feedback_keys[{i}]") for i, entry in enumerate(raw))
    names = [k.key for k in keys]
    if len(set(names)) != len(names):
        raise BadRequest(f"{where} feedback_keys names a key twice: {names}")
    return keys


def _parse_one(entry: Any, where: str) -> FeedbackKey:
    if not isinstance(entry, dict):
        raise BadRequest(f"{where} must be an object with 'key' and 'kind'")
    key = entry.get("key")
    if not isinstance(key, str) or not key.strip() or len(key) > KEY_CHARS:
        raise BadRequest(f"{where}: 'key' must be a name of 1 to {KEY_CHARS} characters")
    kind = entry.get("kind", "thumbs")
    if kind == "thumbs":
        return _thumbs(key)
    if kind == "scale":
        return FeedbackKey(key, "scale", _scale(entry, where))
    if kind == "label":
        return FeedbackKey(key, "label", _labels(entry, where))
    raise BadRequest(f"{where}: 'kind' must be thumbs, scale or label; got {kind!r}")


def _scale(entry: dict[str, Any], where: str) -> tuple[Choice, ...]:
    low, high, step = entry.get("min", 1), entry.get("max", 5), entry.get("step", 1)
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high, step))
    if not numbers or step <= 0 or high <= low:
        raise BadRequest(f"{where}: a scale needs numbers min < max and step > 0")
    count = round((high - low) / step) + 1
    if count > MAX_CHOICES:
        raise BadRequest(f"{where}: a scale has at most {MAX_CHOICES} points; this one has {count}")
    integral = all(float(v).is_integer() for v in (low, step))
    points = [low + i * step for i in range(count)]
    values = [int(p) if integral else round(p, 6) for p in points]
    return tuple(Choice(_number_text(v), v, v) for v in values)


def _labels(entry: dict[str, Any], where: str) -> tuple[Choice, ...]:
    labels = entry.get("labels")
    ok = isinstance(labels, list) and 2 <= len(labels) <= MAX_CHOICES
    if not ok or not all(isinstance(x, str) and x.strip() for x in labels or []):
        raise BadRequest(f"{where}: a label key needs 'labels', 2 to {MAX_CHOICES} non-empty strings")
    assert isinstance(labels, list)
    if len(set(labels)) != len(labels):
        raise BadRequest(f"{where}: 'labels' repeats a label")
    return tuple(Choice(label, None, label) for label in labels)


def _number_text(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"
