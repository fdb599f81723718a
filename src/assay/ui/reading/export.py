"""Export buttons: an experiment's rows as ``assay experiments export`` writes them, and a
comparison's metric table."""

from __future__ import annotations

import csv
import io
import json
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response

from assay.client import Client
from assay.row_export import experiment_records, experiment_text
from assay.ui import queries
from assay.ui.lookup import Database, ExperimentParam, experiments

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
Format = Literal["jsonl", "csv"]
_TYPES = {"jsonl": "application/x-ndjson", "csv": "text/csv; charset=utf-8"}


@router.get("/experiments/{ref}/export.{file_format}")
def export_experiment(experiment: ExperimentParam, file_format: Format, db: Database) -> Response:
    results = Client(store=db.store).read_experiment(experiment.name)
    text = experiment_text(experiment_records(db.store, results), file_format)
    return _download(text, file_format, experiment.name)


@router.get("/compare/export.{file_format}")
def export_comparison(
    file_format: Format,
    db: Database,
    e: Annotated[list[str], Query()] = [],  # noqa: B006 - FastAPI copies defaults
) -> Response:
    """One line per (metric, experiment): its mean and paired statistics against the baseline."""
    page = queries.compare_page(db, experiments(e, db), show="all", metric=None, page=1, per_page=1)
    names = {x.id: x.name for x in page.experiments}
    records = []
    for metric in page.metrics:
        for experiment_id, mean in metric.means.items():
            paired = metric.paired.get(experiment_id)
            records.append(
                {
                    "metric": metric.key,
                    "experiment": names.get(experiment_id, experiment_id),
                    "baseline": experiment_id == page.baseline_id,
                    "mean": mean,
                    "errors": metric.errors.get(experiment_id),
                    **(paired.model_dump() if paired is not None else {}),
                }
            )
    if file_format == "jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    else:
        buffer = io.StringIO()
        columns = list(dict.fromkeys(k for r in records for k in r))
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        text = buffer.getvalue()
    return _download(text, file_format, "comparison")


def _download(text: str, file_format: str, name: str) -> Response:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:100] or "export"
    headers = {"Content-Disposition": f'attachment; filename="{safe}.{file_format}"'}
    return Response(text, media_type=_TYPES[file_format], headers=headers)
