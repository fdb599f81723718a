"""``judge_agreement``: the public entry point, on any store."""

from __future__ import annotations

import uuid
from typing import Any

from assay.agreement._compute import Options, Subject, compute
from assay.agreement._labels import HUMAN, RowLabels, Source, read_labels
from assay.agreement._report import JudgeAgreement
from assay.agreement._scale import SCALES, Scale
from assay.comparison.comparability import experiment_record
from assay.stats.agreement import RESAMPLES, Weights
from assay.store.base import Store
from assay.store.current import current_store
from assay.store.open import open_store

__all__ = ["judge_agreement"]

_WEIGHTS = ("none", "linear", "quadratic")


def judge_agreement(
    experiment: Any,
    judge_key: str,
    human_key: str,
    *,
    against: str | None = None,
    against_experiment: Any = None,
    scale: Scale | None = None,
    weights: Weights = "quadratic",
    human_source: str | None = HUMAN,
    top: int = 10,
    resamples: int = RESAMPLES,
    seed: int = 0,
    client: Any = None,
) -> JudgeAgreement:
    """How well the judge ``judge_key`` agrees with people's ``human_key`` in ``experiment``.

    ``experiment``: a name, id, record or ``ExperimentResults``. ``judge_key``: the judge's
    result key; ``human_key``: the key of the feedback people left (``Client.create_feedback``
    with ``feedback_source_type="human"``, or the UI's labels; ``human_source=None`` takes
    any feedback). Either may be ``"outputs.FIELD"`` or ``"reference.FIELD"`` instead: a
    judge run as the target of an experiment over a human-labelled dataset reports
    ``judge_key="outputs.score"``, ``human_key="reference.label"``.

    ``scale`` (default: detected) decides the figures: nominal labels get accuracy and
    Cohen's kappa; ordinal ones (a few whole numbers) accuracy, kappa with ``weights``
    (quadratic by default) and Spearman's rho; continuous scores Spearman's rho. Each has
    a 95% percentile-bootstrap interval (``resamples`` draws, ``seed``) and n.

    ``against``: a second judge's key (in ``against_experiment``, default the same
    experiment), compared on the rows all three labelled: both judges' kappa (rho when
    continuous) and the paired interval of the difference, other minus this.
    """
    if scale is not None and scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)} or None, got {scale!r}")
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(_WEIGHTS)}, got {weights!r}")
    options = Options(scale=scale, weights=weights, top=top, resamples=resamples, seed=seed)
    store, opened = _store_of(client, experiment)
    try:
        record = experiment_record(store, experiment)
        judge_source = Source(judge_key, human=False)
        human_source_ = Source(human_key, human=True, feedback_source=human_source)
        by_run = against_experiment is None  # one experiment: rows keyed by run id, read fast
        judge, human = read_labels(store, record, [judge_source, human_source_], by_run=by_run)
        subject = Subject(record.name, str(record.id), judge_key, human_key)
        if not judge.labels.keys() & human.labels.keys():
            raise LookupError(_nothing_shared(store, record, subject, judge, human, human_source))
        if against is None and against_experiment is None:
            return compute(subject, judge, human, options)
        other_record = record if against_experiment is None else experiment_record(store, against_experiment)
        other_key = against or judge_key
        (other,) = read_labels(store, other_record, [Source(other_key, human=False)], by_run=by_run)
        return compute(subject, judge, human, options, (other_key, other_record.name, other))
    finally:
        if opened:
            store.close()


def _nothing_shared(
    store: Any, record: Any, subject: Subject, judge: RowLabels, human: RowLabels, source: str | None
) -> str:
    """Why no row has both labels, with the keys that do exist on the experiment's runs."""
    runs = sorted({uuid.UUID(str(run)) for run in judge.runs.values()})
    found: dict[str, set[str]] = {}
    for item in store.list_feedback(runs):
        kind = (item.feedback_source or {}).get("type") or "?"
        found.setdefault(item.key, set()).add(kind)
    keys = ", ".join(f"{key} ({'/'.join(sorted(kinds))})" for key, kinds in sorted(found.items())) or "none"
    whose = f"feedback of source {source!r}" if source else "feedback"
    return (
        f"no row of {record.name} has both a judge label {subject.judge_key!r} "
        f"({len(judge.labels)} rows, {judge.errors} errors) and a human label {subject.human_key!r} "
        f"({len(human.labels)} rows of {whose}); keys on its runs (source): {keys}"
    )


def _store_of(client: Any, experiment: Any) -> tuple[Store, bool]:
    """The store to read (a Client's, a Store, the results' own, else the default), and
    whether it was opened here (and so is closed here)."""
    if isinstance(client, Store):
        return client, False
    if client is not None:
        store = getattr(client, "store", None)
        if not isinstance(store, Store):
            raise TypeError(f"client must be an assay.Client or a Store, got {type(client).__name__}")
        return store, False
    own = getattr(experiment, "_store", None)
    if isinstance(own, Store):
        return own, False
    url = getattr(experiment, "store_url", None)
    if isinstance(url, str) and url != "sqlite://":
        return open_store(url), True
    return current_store(), False
