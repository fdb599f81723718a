"""The price table: what a judge model's tokens cost, so usage carries ``cost_usd``.

assay ships no prices (they change, and differ by provider and contract). Give a model its
price on ``ChatModel(price=Price(...))``, or list models in a JSON file named by
``ASSAY_PRICES``::

    {"gpt-4o-mini": {"input_per_million": 0.15, "output_per_million": 0.6}}

A ``ChatModel``'s own price wins over the table.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from assay.llm.usage import Price

__all__ = ["PRICES_ENV", "price_for"]

PRICES_ENV = "ASSAY_PRICES"


def price_for(model: str) -> Price | None:
    """The table's price of ``model`` (None when there is no table or no entry)."""
    path = os.environ.get(PRICES_ENV)
    if not path:
        return None
    return _table(path, _mtime(path)).get(model)


def _mtime(path: str) -> float:
    try:
        return Path(path).stat().st_mtime
    except OSError as exc:
        raise ValueError(f"{PRICES_ENV}={path!r}: cannot read the price table ({exc})") from None


@lru_cache(maxsize=4)
def _table(path: str, mtime: float) -> dict[str, Price]:
    try:
        decoded = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{PRICES_ENV}={path!r} is not valid JSON: {exc}") from None
    if not isinstance(decoded, dict):
        raise ValueError(f"{PRICES_ENV}={path!r} must hold an object of model name -> price")
    table = {}
    for model, entry in decoded.items():
        try:
            table[str(model)] = Price(float(entry["input_per_million"]), float(entry["output_per_million"]))
        except (TypeError, KeyError, ValueError):
            raise ValueError(
                f"{PRICES_ENV}={path!r}: the price of {model!r} needs numbers "
                '"input_per_million" and "output_per_million" (US dollars)'
            ) from None
    return table
