"""The one rule for which experiments can be compared, used by ``assay.compare``,
``evaluate_comparative`` and the UI's compare page.

Experiments are comparable when there are at least two, none is given twice, and all
ran on one stored dataset (examples pair by their id, which only a shared dataset gives).
Different versions of that dataset are comparable on the examples they share; callers
warn about it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from assay.errors import NotComparableError
from assay.store.base import Store
from assay.store.records import ExperimentRecord

__all__ = ["NotComparableError", "check_comparable", "experiment_record"]


def check_comparable(experiments: Sequence[Any], *, what: str = "compare") -> None:
    """Raise ``NotComparableError`` naming the experiments and datasets when the rule fails.

    Each experiment needs ``id``, ``name`` and ``dataset_id`` (an ``ExperimentRecord`` or
    the UI's summary); ``dataset_name`` is used in the message when present."""
    if len(experiments) < 2:
        raise NotComparableError(f"{what} needs two or more experiments, got {len(experiments)}")
    ids = [str(e.id) for e in experiments]
    repeated = sorted({e.name for e in experiments if ids.count(str(e.id)) > 1})
    if repeated:
        raise NotComparableError(f"{what} got the same experiment twice: {', '.join(map(repr, repeated))}")
    datasets = {_dataset(e) for e in experiments}
    if len(datasets) != 1 or None in datasets:
        listing = ", ".join(f"{e.name!r} on {_dataset_label(e)}" for e in experiments)
        raise NotComparableError(
            f"{what} pairs rows by example, so the experiments must share one stored dataset; got {listing}"
        )


def _dataset(experiment: Any) -> str | None:
    value = getattr(experiment, "dataset_id", None)
    return None if value is None else str(value)


def _dataset_label(experiment: Any) -> str:
    dataset_id = _dataset(experiment)
    if dataset_id is None:
        return "no stored dataset"
    name = getattr(experiment, "dataset_name", None)
    return f"dataset {name!r} ({dataset_id})" if name else f"dataset {dataset_id}"


def experiment_record(store: Store, ref: Any) -> ExperimentRecord:
    """The stored record of ``ref``: a record or results (re-read: they may have moved on),
    an id, or a name (or an id written as text); ``LookupError`` naming it otherwise."""
    if isinstance(ref, ExperimentRecord):
        record: ExperimentRecord | None = store.get_experiment(id=ref.id) or ref
        assert record is not None
        return record
    inner = getattr(ref, "experiment", None)  # ExperimentResults: re-read, it may have moved on
    if isinstance(inner, ExperimentRecord):
        return store.get_experiment(id=inner.id) or inner
    if isinstance(ref, uuid.UUID):
        record = store.get_experiment(id=ref)
    else:
        record = store.get_experiment(name=str(ref))
        if record is None:
            try:
                record = store.get_experiment(id=uuid.UUID(str(ref)))
            except ValueError:
                record = None
    if record is None:
        from assay._suggest import did_you_mean  # only on this error path

        known = (e.name for e in store.list_experiments())
        raise LookupError(f"no experiment {ref!r}{did_you_mean(str(ref), known)} in the store at {store.url}")
    return record
