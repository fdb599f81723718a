"""From two (or three) raters' labels by row to a ``JudgeAgreement``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.agreement._labels import RowKey, RowLabels
from assay.agreement._report import Confusion, Disagreement, JudgeAgreement, JudgeComparison
from assay.agreement._scale import Scale, comparable, detect_scale
from assay.stats import agreement as stats
from assay.stats.agreement import Estimate, Weights

__all__ = ["Options", "Subject", "compute"]


@dataclass(frozen=True)
class Options:
    scale: Scale | None = None  # None: detected from the labels
    weights: Weights = "quadratic"  # kappa's weights on an ordinal scale
    top: int = 10  # disagreeing rows listed
    resamples: int = stats.RESAMPLES
    seed: int = 0


@dataclass(frozen=True)
class Subject:
    """The experiment and keys a report is about (for its header and links)."""

    experiment: str
    experiment_id: str
    judge_key: str
    human_key: str


def compute(
    subject: Subject,
    judge: RowLabels,
    human: RowLabels,
    options: Options,
    other: tuple[str, str, RowLabels] | None = None,
) -> JudgeAgreement:
    """Agreement of ``judge`` with ``human`` on their shared rows; ``other`` is a second
    judge (key, experiment, labels) compared on the rows all three share."""
    shared = sorted(judge.labels.keys() & human.labels.keys(), key=str)
    first = _comparable([judge.labels[k] for k in shared], f"judge {subject.judge_key!r}")
    second = _comparable([human.labels[k] for k in shared], f"human {subject.human_key!r}")
    scale = options.scale or detect_scale(first, second, (subject.judge_key, subject.human_key))
    weights: Weights = options.weights if scale == "ordinal" else "none"
    figures = _figures(first, second, scale, weights, options)
    report = JudgeAgreement(
        experiment=subject.experiment,
        experiment_id=subject.experiment_id,
        judge_key=subject.judge_key,
        human_key=subject.human_key,
        scale=scale,
        n=len(shared),
        kappa_weights=weights,
        accuracy=figures.get("accuracy"),
        kappa=figures.get("kappa"),
        spearman=figures.get("spearman"),
        confusion=_confusion(first, second) if scale != "continuous" and shared else None,
        disagreements=_disagreements(subject, shared, first, second, judge, scale, options.top),
        judge_only=len(judge.labels.keys() - human.labels.keys()),
        human_only=len(human.labels.keys() - judge.labels.keys()),
        judge_errors=judge.errors,
    )
    if other is None:
        return report
    comparison = _compare(subject, judge, human, other, scale, weights, options)
    return JudgeAgreement(**{**report.__dict__, "comparison": comparison})


def _comparable(labels: list[Any], where: str) -> list[Any]:
    """``comparable`` of each label; whole numbers (most labels) pass as they are."""
    return [label if type(label) is int else comparable(label, where=where) for label in labels]


def _figures(
    first: list[Any], second: list[Any], scale: Scale, weights: Weights, options: Options
) -> dict[str, Estimate]:
    rows = stats.LabelledRows({"judge": first, "human": second})
    pair = rows.pair("judge", "human")
    chosen: dict[str, stats.Statistic] = {}
    if scale != "continuous":
        chosen["accuracy"] = stats.accuracy(pair)
        chosen["kappa"] = stats.cohen_kappa(pair, weights)
    if scale != "nominal":
        chosen["spearman"] = stats.spearman(pair)
    return stats.estimates(rows, chosen, resamples=options.resamples, seed=options.seed)


def _compare(
    subject: Subject,
    judge: RowLabels,
    human: RowLabels,
    other: tuple[str, str, RowLabels],
    scale: Scale,
    weights: Weights,
    options: Options,
) -> JudgeComparison:
    other_key, other_experiment, other_labels = other
    shared = sorted(judge.labels.keys() & human.labels.keys() & other_labels.labels.keys(), key=str)
    columns = {
        "this": [comparable(judge.labels[k], where=f"judge {subject.judge_key!r}") for k in shared],
        "other": [comparable(other_labels.labels[k], where=f"judge {other_key!r}") for k in shared],
        "human": [comparable(human.labels[k], where=f"human {subject.human_key!r}") for k in shared],
    }
    rows = stats.LabelledRows(columns)
    if scale == "continuous":
        name, this, that = (
            "Spearman's rho",
            stats.spearman(rows.pair("this", "human")),
            stats.spearman(rows.pair("other", "human")),
        )
    else:
        name = "Cohen's kappa" if weights == "none" else f"{weights} weighted kappa"
        this = stats.cohen_kappa(rows.pair("this", "human"), weights)
        that = stats.cohen_kappa(rows.pair("other", "human"), weights)
    found = stats.estimates(
        rows,
        {"this": this, "other": that, "difference": lambda w: that(w) - this(w)},
        resamples=options.resamples,
        seed=options.seed,
    )
    return JudgeComparison(
        other_key, other_experiment, name, found["this"], found["other"], found["difference"]
    )


def _confusion(first: list[Any], second: list[Any]) -> Confusion:
    labels = sorted(set(first) | set(second))
    index = {label: i for i, label in enumerate(labels)}
    counts = [[0] * len(labels) for _ in labels]
    for a, b in zip(first, second, strict=True):
        counts[index[a]][index[b]] += 1
    return Confusion(labels, counts)


def _disagreements(
    subject: Subject,
    shared: list[RowKey],
    first: list[Any],
    second: list[Any],
    judge: RowLabels,
    scale: Scale,
    top: int,
) -> list[Disagreement]:
    if top <= 0 or not shared:
        return []
    distances = _distances(first, second, scale)
    ranked = sorted((i for i, d in enumerate(distances) if d > 0), key=lambda i: (-distances[i], shared[i]))[
        :top
    ]
    found = []
    for i in ranked:
        key = shared[i]
        example_id, repetition = key if isinstance(key, tuple) else (None, None)
        run_id = str(judge.runs.get(key, ""))
        found.append(
            Disagreement(
                example_id=example_id,
                repetition=repetition,
                run_id=run_id,
                judge=first[i],
                human=second[i],
                distance=distances[i],
                link=f"/experiments/{subject.experiment_id}/rows/{run_id}",
            )
        )
    return found


def _distances(first: list[Any], second: list[Any], scale: Scale) -> list[float]:
    if scale == "nominal":
        return [0.0 if a == b else 1.0 for a, b in zip(first, second, strict=True)]
    if scale == "ordinal":
        return [abs(float(a) - float(b)) for a, b in zip(first, second, strict=True)]
    # continuous scores may sit on different scales: compare where each ranks (0..1)
    return [abs(a - b) for a, b in zip(_quantiles(first), _quantiles(second), strict=True)]


def _quantiles(values: list[Any]) -> list[float]:
    """Each value's mid-rank scaled to 0..1 (tied values share one)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        stop = start
        while stop + 1 < len(order) and values[order[stop + 1]] == values[order[start]]:
            stop += 1
        for i in order[start : stop + 1]:
            out[i] = (start + stop) / 2 / max(1, len(values) - 1)
        start = stop + 1
    return out
