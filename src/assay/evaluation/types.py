"""Named types for what ``evaluate`` and ``aevaluate`` accept.

These are aliases for annotations (``def my_target(...)`` needs none of them); each names
what the runner accepts at that parameter today.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeAlias, TypedDict, runtime_checkable

from assay.evaluation._base import RunEvaluator
from assay.schemas import Dataset, Example
from assay.store.base import Store

__all__ = [
    "DataSource",
    "EvaluateOptions",
    "EvaluatorLike",
    "HasStore",
    "RunOnDatasetOptions",
    "Runnable",
    "SummaryEvaluatorLike",
    "Target",
]


@runtime_checkable
class Runnable(Protocol):
    """An object with LangChain's ``invoke(inputs)``; ``ainvoke`` is used when present."""

    def invoke(self, inputs: dict[str, Any], /) -> Any: ...


#: a function of the example's ``inputs`` (sync or async) returning the outputs, or a Runnable
Target: TypeAlias = Callable[[dict[str, Any]], Any] | Callable[[dict[str, Any]], Awaitable[Any]] | Runnable
#: a stored dataset (name, id or ``Dataset``), a ``.jsonl``/``.json``/``.csv`` path, or examples
DataSource: TypeAlias = str | uuid.UUID | Dataset | os.PathLike[str] | Iterable[Example | Mapping[str, Any]]
#: a RunEvaluator, a function whose parameters name what it reads (``outputs``,
#: ``reference_outputs``, ``inputs``, ``run``, ``example``), or a built-in evaluator's name
EvaluatorLike: TypeAlias = RunEvaluator | Callable[..., Any] | str
#: a function of the whole experiment (``runs``, ``examples``, ``outputs``, ...)
SummaryEvaluatorLike: TypeAlias = Callable[..., Any]


class RunOnDatasetOptions(TypedDict, total=False):
    """The options of ``evaluate`` that ``Client.run_on_dataset`` passes on as they are
    (for ``**options: Unpack[...]``: a type checker rejects a misspelt or mistyped one)."""

    summary_evaluators: Sequence[SummaryEvaluatorLike] | None
    metadata: dict[str, Any] | None
    experiment_prefix: str | None
    description: str | None
    num_repetitions: int
    blocking: bool
    upload_results: bool | None
    error_handling: Literal["log", "ignore", "raise"]
    resume: bool
    upload_runs: bool | None
    disable_evaluator_tracing: bool
    shard: tuple[int, int] | None
    wait_for_lease: bool
    executor: Any
    retry_errors: bool
    max_cost: float | None


class EvaluateOptions(RunOnDatasetOptions, total=False):
    """Every keyword of ``evaluate`` but ``client``: what ``Client.evaluate`` takes."""

    data: DataSource | None
    evaluators: Sequence[EvaluatorLike] | None
    max_concurrency: int | None
    experiment: Any
    progress: bool | None
    randomize_order: bool


@runtime_checkable
class HasStore(Protocol):
    """What ``client=`` must be: anything with a ``store`` (an ``assay.Client``). Evaluation
    names no class above it."""

    @property
    def store(self) -> Store: ...
