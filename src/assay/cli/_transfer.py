"""Datasets and experiments in and out of the store: ``datasets import/export``,
``experiments export/delete`` (and the plain listings, when no sub-command is given)."""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from assay.cli._browse import experiment_name, list_datasets, list_experiments
from assay.cli._common import UsageError
from assay.row_export import csv_text, experiment_records, experiment_text, flat, flat_row

_NAMESPACE = uuid.UUID("5d1f5b7e-8a7c-4f43-9a55-3c0b4f1a7a11")


def add_parsers(commands: Any, parent: argparse.ArgumentParser) -> None:
    datasets = commands.add_parser("datasets", parents=[parent], help="list, import and export datasets")
    datasets.set_defaults(handler=list_datasets)
    actions = datasets.add_subparsers(dest="action", metavar="{list,import,export}")
    actions.add_parser("list", parents=[parent], help="list datasets").set_defaults(handler=list_datasets)
    importing = actions.add_parser(
        "import", parents=[parent], help="create a dataset from a .jsonl/.json/.csv file"
    )
    importing.add_argument("file")
    importing.add_argument("--name", required=True, help="the new dataset's name")
    importing.add_argument("--description")
    importing.set_defaults(handler=import_dataset, writes=True)
    exporting = actions.add_parser(
        "export", parents=[parent], help="write a dataset's examples as jsonl or csv"
    )
    exporting.add_argument("name")
    exporting.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    exporting.add_argument("-o", "--output", help="file to write (default: stdout)")
    exporting.set_defaults(handler=export_dataset)

    experiments = commands.add_parser(
        "experiments", parents=[parent], help="list, export and delete experiments"
    )
    experiments.set_defaults(handler=list_experiments)
    actions = experiments.add_subparsers(dest="action", metavar="{list,export,delete}")
    actions.add_parser("list", parents=[parent], help="list experiments").set_defaults(
        handler=list_experiments
    )
    exporting = actions.add_parser(
        "export", parents=[parent], help="write an experiment's rows as jsonl, csv or parquet"
    )
    exporting.add_argument("name")
    exporting.add_argument("--format", choices=("jsonl", "csv", "parquet"), default="jsonl")
    exporting.add_argument("-o", "--output", help="file to write (default: stdout; parquet needs a file)")
    exporting.set_defaults(handler=export_experiment)
    deleting = actions.add_parser("delete", parents=[parent], help="delete an experiment with its rows")
    deleting.add_argument("name")
    deleting.set_defaults(handler=delete_experiment)


def import_dataset(args: argparse.Namespace) -> int:
    from assay.client import Client
    from assay.evaluation import load_file
    from assay.schemas import Example

    records = load_file(Path(args.file))
    if not records:
        raise UsageError(f"{args.file}: holds no examples")
    client = Client(args.db)
    if client.store.get_dataset(name=args.name) is not None:
        raise UsageError(
            f"a dataset named {args.name!r} already exists in {client.store.url}; choose another --name"
        )
    dataset = client.create_dataset(args.name, description=args.description or f"imported from {args.file}")
    examples = [
        Example(
            id=_example_id(record.get("id")),
            dataset_id=dataset.id,
            inputs=record["inputs"],
            outputs=record.get("outputs"),
            metadata=record.get("metadata"),
        )
        for record in records
    ]
    client.store.add_examples(dataset.id, examples)
    print(f"imported {len(examples)} examples into dataset {args.name!r} ({client.store.url})")
    return 0


def _example_id(given: Any) -> uuid.UUID:
    if given is None:
        return uuid.uuid4()
    try:
        return uuid.UUID(str(given))
    except ValueError:
        return uuid.uuid5(_NAMESPACE, str(given))


def export_dataset(args: argparse.Namespace) -> int:
    from assay.client import Client

    client = Client(args.db)
    examples = client.list_examples(dataset_name=args.name)
    records = [
        {"id": str(e.id), "inputs": e.inputs, "outputs": e.outputs, "metadata": e.metadata} for e in examples
    ]
    if args.format == "jsonl":
        _write_text(
            args.output, "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records)
        )
    else:  # the columns `assay datasets import` and data= read back: inputs.x, outputs.x, metadata.x
        columns = [
            flat({k: v for k, v in r.items() if k != "id"}, ("inputs", "outputs", "metadata"))
            for r in records
        ]
        _write_text(args.output, csv_text(columns))
    return 0


def export_experiment(args: argparse.Namespace) -> int:
    from assay.client import Client

    client = Client(args.db)
    results = client.read_experiment(experiment_name(client, args.name))
    records = experiment_records(client.store, results)
    if args.format in ("jsonl", "csv"):
        _write_text(args.output, experiment_text(records, args.format))
    else:
        _write_parquet(args.output, [flat_row(r) for r in records])
    return 0


def delete_experiment(args: argparse.Namespace) -> int:
    from assay.client import Client

    client = Client(args.db)
    record = client.store.get_experiment(name=experiment_name(client, args.name))
    assert record is not None
    rows = client.store.count_rows(record.id)
    client.store.delete_experiment(record.id)
    print(f"deleted experiment {args.name!r} ({rows} rows)")
    return 0


def _write_text(output: str | None, text: str) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text(text, encoding="utf-8")


def _write_parquet(output: str | None, records: list[dict[str, Any]]) -> None:
    if output is None:
        raise UsageError("--format parquet needs -o FILE.parquet (it is binary)")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UsageError("--format parquet needs pyarrow: pip install 'assay[parquet]'") from None
    columns: dict[str, None] = {}
    for record in records:
        columns.update(dict.fromkeys(record))
    table = pa.table(
        {column: _parquet_column([record.get(column) for record in records]) for column in columns}
    )
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, output)


def _parquet_column(values: list[Any]) -> list[Any]:
    """One type a column: numbers stay numbers; nested or mixed values become JSON text."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int, float} or len(kinds) == 1 and not kinds & {dict, list}:
        return values
    return [
        None if v is None else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
        for v in values
    ]
