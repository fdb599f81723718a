"""The judge-against-people panel of an experiment page: for each evaluator key people
also labelled (the same key), or the pair a person picks, ``assay.judge_agreement`` on
the rows both labelled: accuracy and Cohen's kappa (weighted on an ordinal scale) and
Spearman's rho, each with its 95% bootstrap interval and n."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.agreement import JudgeAgreement, judge_agreement
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.annotate.human import NOTE_KEY, SKIP_KEY, latest_labels
from assay.ui.errors import BadRequest
from assay.ui.models import ExperimentDetail

__all__ = ["JudgePanel", "judge_panel"]


@dataclass
class JudgePanel:
    judge_keys: list[str]
    human_keys: list[str]
    chosen: tuple[str, str] | None = None
    reports: list[JudgeAgreement] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # a pair with no row labelled by both


def judge_panel(
    db: ReadOnlyDatabase, detail: ExperimentDetail, judge: str | None, human: str | None
) -> JudgePanel | None:
    """None when there is nothing to set side by side (no metric, or no human label)."""
    judge_keys = [m.key for m in detail.metrics]
    labels = latest_labels(db, [detail.experiment.id])  # any key people labelled, defined or not
    human_keys = list(dict.fromkeys(x.key for x in labels if x.key not in (NOTE_KEY, SKIP_KEY)))
    if not judge_keys or not human_keys:
        return None
    panel = JudgePanel(judge_keys, human_keys)
    pairs = [(key, key) for key in human_keys if key in judge_keys]
    if judge or human:
        panel.chosen = _chosen(panel, judge, human)
        pairs = [panel.chosen, *(p for p in pairs if p != panel.chosen)]
    for judge_key, human_key in pairs:
        try:
            panel.reports.append(judge_agreement(detail.experiment.id, judge_key, human_key, client=db.store))
        except LookupError as exc:
            panel.problems.append(str(exc))
    return panel


def _chosen(panel: JudgePanel, judge: str | None, human: str | None) -> tuple[str, str]:
    if judge not in panel.judge_keys:
        raise BadRequest(
            f"parameter 'judge' must be one of this experiment's metrics: {', '.join(panel.judge_keys)}"
        )
    if human not in panel.human_keys:
        raise BadRequest(
            f"parameter 'human' must be one of its human feedback keys: {', '.join(panel.human_keys)}"
        )
    return judge, human
