"""People's labels added to what the read-only pages already show: a column in the row
table, the human metrics on the experiment page."""

from __future__ import annotations

from assay.store.read.annotation import stored_metadata
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.annotate.human import latest_labels
from assay.ui.annotate.keys import FeedbackKey, keys_from_metadata
from assay.ui.annotate.summary import human_cells, human_metrics
from assay.ui.errors import BadRequest
from assay.ui.models import ExperimentDetail, ExperimentSummary, RowPage
from assay.ui.queries._sql import loads

__all__ = ["feedback_keys", "readable_keys", "with_human_cells", "with_human_metrics"]


def feedback_keys(db: ReadOnlyDatabase, experiment: ExperimentSummary) -> tuple[FeedbackKey, ...]:
    """The experiment's feedback keys (its metadata's, else its dataset's, else the default)."""
    found = [
        (f"experiment {experiment.name!r} metadata", loads(stored_metadata(db, "experiments", experiment.id)))
    ]
    if experiment.dataset_id is not None:
        data = stored_metadata(db, "datasets", experiment.dataset_id)
        found.append((f"dataset {experiment.dataset_name!r} metadata", loads(data)))
    return keys_from_metadata(*found)


def readable_keys(
    db: ReadOnlyDatabase, experiment: ExperimentSummary
) -> tuple[tuple[FeedbackKey, ...], str | None]:
    """The keys, or none and why: a bad definition never stops a page from reading."""
    try:
        return feedback_keys(db, experiment), None
    except BadRequest as exc:
        return (), f"{exc}. Fix the feedback_keys definition to record or show people's labels."


def with_human_metrics(db: ReadOnlyDatabase, detail: ExperimentDetail) -> ExperimentDetail:
    keys, problem = readable_keys(db, detail.experiment)
    if problem is not None:
        return detail.model_copy(update={"human_error": problem})
    labels = latest_labels(db, [detail.experiment.id])
    return detail.model_copy(update={"human_metrics": human_metrics(labels, keys)})


def with_human_cells(db: ReadOnlyDatabase, page: RowPage) -> RowPage:
    if not page.rows:
        return page
    keys, _ = readable_keys(db, page.experiment)
    labels = latest_labels(db, [page.experiment.id], [row.run_id for row in page.rows])
    cells = human_cells(labels, keys)
    rows = [row.model_copy(update={"human": cells.get(row.run_id, [])}) for row in page.rows]
    return page.model_copy(update={"rows": rows})
