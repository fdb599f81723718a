"""LangSmith's ``upload_csv`` / ``upload_dataframe`` / ``get_test_results``: tables in and out."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.errors import NotFoundError
from assay.schemas import Dataset, Example
from assay.store import Store


class TableUploads:
    """Mixed into ``Client``."""

    store: Store

    def upload_csv(
        self,
        csv_file: str | os.PathLike[str] | tuple[str, io.BytesIO],
        input_keys: Sequence[str],
        output_keys: Sequence[str],
        *,
        name: str | None = None,
        description: str | None = None,
        data_type: Any = None,
        **ignored: Any,
    ) -> Dataset:
        """A dataset from a CSV file: ``input_keys`` columns become inputs, ``output_keys``
        columns reference outputs. Named after the file unless ``name`` is given."""
        if isinstance(csv_file, tuple):
            label, handle = csv_file
            text = handle.getvalue().decode("utf-8")
        else:
            label, text = str(csv_file), Path(csv_file).read_text(encoding="utf-8")
        rows = list(csv.DictReader(io.StringIO(text)))
        columns = set(rows[0]) if rows else set()
        missing = [k for k in (*input_keys, *output_keys) if k not in columns]
        if missing:
            raise ValueError(f"{label}: no column(s) {missing}; its columns are {sorted(columns)}")
        # LangSmith names the dataset after the file: its whole name for an uploaded
        # (name, file) pair, its stem for a path.
        default = label if isinstance(csv_file, tuple) else Path(label).stem
        return self._upload_rows(name or default, description, rows, input_keys, output_keys)

    def upload_dataframe(
        self,
        df: Any,
        name: str,
        input_keys: Sequence[str],
        output_keys: Sequence[str],
        *,
        description: str | None = None,
        data_type: Any = None,
        **ignored: Any,
    ) -> Dataset:
        missing = [k for k in (*input_keys, *output_keys) if k not in df.columns]
        if missing:
            raise ValueError(f"upload_dataframe: no column(s) {missing}; columns are {list(df.columns)}")
        rows = [_plain_row(row) for row in df.to_dict(orient="records")]
        return self._upload_rows(name, description, rows, input_keys, output_keys)

    def _upload_rows(
        self,
        name: str,
        description: str | None,
        rows: list[dict[str, Any]],
        input_keys: Sequence[str],
        output_keys: Sequence[str],
    ) -> Dataset:
        dataset = self.store.create_dataset(name, description)
        examples = [
            Example(
                dataset_id=dataset.id,
                inputs={k: row[k] for k in input_keys},
                outputs={k: row[k] for k in output_keys} if output_keys else None,
            )
            for row in rows
        ]
        if examples:
            self.store.add_examples(dataset.id, examples)
        return self.store.get_dataset(id=dataset.id) or dataset

    def get_test_results(self, *, project_id: Any = None, project_name: str | None = None) -> Any:
        """One line per root run of the experiment, indexed by example id, with LangSmith's
        columns: ``reference.*``, ``input.*``, ``outputs.*``, ``execution_time``, ``error``,
        ``id`` and ``feedback.<key>`` (the mean over the run's results of that key)."""
        import pandas as pd

        record = self.store.get_experiment(name=project_name) if project_name else None
        if record is None and project_id is not None:
            from assay.client._projects import as_uuid

            record = self.store.get_experiment(id=as_uuid(project_id, "project_id"))
        if record is None:
            raise NotFoundError(f"no experiment {project_name or project_id!r} in {self.store.url}")
        lines = []
        for row in self.store.load_rows(record):
            run, example = row.run, row.example
            line: dict[str, Any] = {"example_id": run.reference_example_id}
            line.update({f"reference.{k}": v for k, v in (example.outputs or {}).items()})
            line.update({f"input.{k}": v for k, v in run.inputs.items()})
            line.update({f"outputs.{k}": v for k, v in (run.outputs or {}).items()})
            line["execution_time"] = (run.end_time - run.start_time).total_seconds() if run.end_time else None
            line["error"], line["id"] = run.error, run.id
            line.update(_feedback_means(row.results))
            lines.append(line)
        return pd.DataFrame(lines).set_index("example_id") if lines else pd.DataFrame()


def _feedback_means(results: Sequence[Any]) -> dict[str, float]:
    scores: dict[str, list[float]] = {}
    for result in results:
        if result.numeric_score is not None:
            scores.setdefault(f"feedback.{result.key}", []).append(result.numeric_score)
    return {key: sum(values) / len(values) for key, values in scores.items()}


def _plain_row(row: dict[Any, Any]) -> dict[str, Any]:
    """A DataFrame row with NumPy scalars as Python values (the store holds JSON)."""
    return {
        str(k): (v.item() if hasattr(v, "item") and getattr(v, "ndim", 1) == 0 else v) for k, v in row.items()
    }
