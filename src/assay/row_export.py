"""An experiment's rows as exported: ``assay experiments export`` and the UI's buttons write
the same records (people's labels included), as JSONL or flat CSV columns."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

__all__ = ["csv_text", "experiment_records", "experiment_text", "flat", "flat_row"]


def experiment_records(store: Any, results: Any) -> list[dict[str, Any]]:
    """An experiment's rows as exported, people's labels included (the UI's buttons too)."""
    labels = _labels_by_run(store, results.rows)
    return [_row_record(row, labels.get(str(row.run.id), [])) for row in results.rows]


def experiment_text(records: list[dict[str, Any]], file_format: str) -> str:
    """JSONL (one row a line) or CSV (flat columns: ``score.<key>``, ``human.<key>``)."""
    if file_format == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records)
    return csv_text([flat_row(r) for r in records])


def _labels_by_run(store: Any, rows: Any) -> dict[str, list[Any]]:
    """People's latest labels (``assay.human``) per run id."""
    from assay.human import human_labels

    found: dict[str, list[Any]] = {}
    for label in human_labels(store, [row.run.id for row in rows]):
        found.setdefault(label.run_id, []).append(label)
    return found


def _row_record(row: Any, labels: list[Any]) -> dict[str, Any]:
    return {
        "example_id": str(row.example.id),
        "repetition": row.repetition,
        "inputs": row.example.inputs,
        "outputs": row.run.outputs,
        "reference_outputs": row.example.outputs,
        "error": row.run.error,
        "latency_ms": row.run.latency_ms,
        "results": [
            {"key": r.key, "score": r.numeric_score, "value": r.value, "comment": r.comment, "error": r.error}
            for r in row.results
        ],
        "human": [
            {
                "key": x.key,
                "annotator": x.annotator,
                "score": x.score,
                "value": x.value,
                "comment": x.comment,
                "correction": x.correction,
                "created_at": x.created_at,
            }
            for x in labels
        ],
    }


def flat_row(record: dict[str, Any]) -> dict[str, Any]:
    from assay.human import Label
    from assay.human.summary import human_columns

    row = flat(record, ("inputs", "outputs", "reference_outputs"))
    labels = [
        Label(run_id="", comment=None, correction=None, created_at="", **_label_fields(x))
        for x in row.pop("human")
    ]
    for result in row.pop("results"):
        row[f"score.{result['key']}"] = result["score"]
        if result["error"] is not None:
            row[f"error.{result['key']}"] = result["error"]
    row.update(human_columns(labels))
    return row


def _label_fields(record: dict[str, Any]) -> dict[str, Any]:
    return {name: record[name] for name in ("key", "annotator", "score", "value")}


def flat(record: dict[str, Any], sections: tuple[str, ...]) -> dict[str, Any]:
    """A record's sections as dotted columns: ``inputs.question``, ``outputs.answer``."""
    columns = {k: v for k, v in record.items() if k not in sections}
    for section in sections:
        for key, value in (record.get(section) or {}).items():
            columns[f"{section}.{key}"] = value
    return columns


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "" if value is None else value


def csv_text(records: list[dict[str, Any]]) -> str:
    columns: dict[str, None] = {}
    for record in records:
        columns.update(dict.fromkeys(record))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: _cell(v) for k, v in record.items()})
    return buffer.getvalue()
