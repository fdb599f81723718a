"""Targets and evaluators the Ray tests ship to the workers (by value: the workers cannot
import a test module)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any


def doubling(inputs: dict[str, Any]) -> dict[str, Any]:
    """Fails on every seventh example: a target exception is a row with an error."""
    if inputs["x"] % 7 == 3:
        raise ValueError(f"no answer for {inputs['x']}")
    return {"answer": inputs["x"] * 2}


async def doubling_async(inputs: dict[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(0.001)
    return doubling(inputs)


def slow_doubling(inputs: dict[str, Any]) -> dict[str, Any]:
    time.sleep(0.004)
    return {"answer": inputs["x"] * 2}


def where_it_ran(inputs: dict[str, Any]) -> dict[str, Any]:
    import ray

    return {"pid": os.getpid(), "node": ray.get_runtime_context().get_node_id()}


def doubled(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    return bool(outputs["answer"] == reference_outputs["answer"])


def ratio(outputs: dict[str, Any], inputs: dict[str, Any]) -> float:
    """Fails on every eleventh example: an evaluator exception is an error result."""
    if inputs["x"] % 11 == 5:
        raise ZeroDivisionError("no ratio here")
    return float(outputs["answer"]) / (inputs["x"] + 1)


async def labelled(outputs: dict[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"key": "parity", "value": "even" if outputs["answer"] % 4 == 0 else "odd", "score": 1}


def accuracy(outputs: list[Any], reference_outputs: list[Any]) -> float:
    pairs = [(o, r) for o, r in zip(outputs, reference_outputs) if o]
    return sum(o["answer"] == r["answer"] for o, r in pairs) / max(len(pairs), 1)


def dies_on_13(inputs: dict[str, Any]) -> dict[str, Any]:
    """Ends its worker process on one example, every time: a batch no retry can finish."""
    if inputs["x"] == 13:
        os._exit(1)
    return {"answer": inputs["x"] * 2}
