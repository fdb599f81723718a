"""What ``judge_agreement`` returns, and how it reads as text and JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from assay.stats.agreement import Estimate

__all__ = ["Confusion", "Disagreement", "JudgeAgreement", "JudgeComparison"]


@dataclass(frozen=True)
class Disagreement:
    """A row where the judge and the people differ, ``distance`` apart, and its page in the UI."""

    example_id: str | None  # None when read by run (one experiment, plain keys)
    repetition: int | None
    run_id: str
    judge: Any
    human: Any
    distance: float
    link: str


@dataclass(frozen=True)
class Confusion:
    """``counts[i][j]``: rows the judge labelled ``labels[i]`` and people ``labels[j]``."""

    labels: list[Any]
    counts: list[list[int]]


@dataclass(frozen=True)
class JudgeComparison:
    """Two judges on the same labelled rows: ``difference`` is other minus this judge."""

    other_key: str
    other_experiment: str
    statistic: str
    this: Estimate
    other: Estimate
    difference: Estimate

    @property
    def n(self) -> int:
        return self.difference.n


@dataclass(frozen=True)
class JudgeAgreement:
    """How well a judge agrees with people on the rows both labelled."""

    experiment: str
    experiment_id: str
    judge_key: str
    human_key: str
    scale: str
    n: int
    kappa_weights: str
    accuracy: Estimate | None = None
    kappa: Estimate | None = None
    spearman: Estimate | None = None
    confusion: Confusion | None = None
    disagreements: list[Disagreement] = field(default_factory=list)
    judge_only: int = 0  # rows the judge labelled that people did not
    human_only: int = 0  # rows people labelled that the judge did not (or it errored)
    judge_errors: int = 0
    comparison: JudgeComparison | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return "\n".join(_lines(self))


def _lines(report: JudgeAgreement) -> list[str]:
    lines = [
        f"judge {report.judge_key!r} against people's {report.human_key!r} in {report.experiment} "
        f"({report.scale} labels, n={report.n})",
    ]
    if report.n == 0:
        lines.append("  no row has both a judge label and a human label")
    kappa_name = (
        "Cohen's kappa" if report.kappa_weights == "none" else f"{report.kappa_weights} weighted kappa"
    )
    for name, value in (
        ("accuracy", report.accuracy),
        (kappa_name, report.kappa),
        ("Spearman's rho", report.spearman),
    ):
        if value is not None:
            lines.append(f"  {name:<24} {_figure(value)}")
    skipped = [
        f"{report.judge_only} judged but unlabelled",
        f"{report.human_only} labelled but not judged",
        f"{report.judge_errors} judge errors",
    ]
    lines.append("  left out: " + ", ".join(skipped))
    if report.confusion is not None:
        lines.extend(_confusion_lines(report.confusion))
    if report.comparison is not None:
        c = report.comparison
        lines.append(
            f"  against {c.other_key!r} ({c.other_experiment}) on the same {c.n} rows: "
            f"{c.statistic} {_figure(c.this)} vs {_figure(c.other)}; "
            f"difference {_figure(c.difference, signed=True)}"
        )
    if report.disagreements:
        lines.append("  rows where they disagree most:")
        for d in report.disagreements:
            lines.append(f"    judge {d.judge!r:<10} human {d.human!r:<10} {d.link}")
    return lines


def _figure(estimate: Estimate, *, signed: bool = False) -> str:
    if estimate.value is None:
        return "undefined (one label only)"
    sign = "+" if signed else ""
    text = f"{estimate.value:{sign}.3f}"
    if estimate.interval is not None:
        text += f" [{estimate.interval.low:{sign}.3f}, {estimate.interval.high:{sign}.3f}]"
    return text


def _confusion_lines(confusion: Confusion) -> list[str]:
    names = [str(label) for label in confusion.labels]
    width = max(6, *(len(name) for name in names))
    lines = [
        "  confusion (rows: judge, columns: human):",
        "    " + " " * width + "".join(f"{n:>{width + 1}}" for n in names),
    ]
    for name, counts in zip(names, confusion.counts, strict=True):
        lines.append(f"    {name:>{width}}" + "".join(f"{count:>{width + 1}}" for count in counts))
    return lines
