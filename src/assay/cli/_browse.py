"""Reading the store: ``datasets``, ``experiments``, ``show``; and ``demo``, ``ui``."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assay._suggest import did_you_mean
from assay.cli._common import UsageError
from assay.cli._conclude import add_gate_arguments, conclude


def add_parsers(commands: Any, parent: argparse.ArgumentParser) -> None:
    demo = commands.add_parser(
        "demo", parents=[parent], help="run the bundled demo experiment and print its report"
    )
    demo.set_defaults(handler=demo_command, writes=True)
    ui = commands.add_parser("ui", parents=[parent], help="serve the local web UI over the store")
    ui.add_argument("--host", default="127.0.0.1")
    ui.add_argument("--port", type=int, default=8765)
    ui.add_argument("--token", help="required for a non-loopback host (or set ASSAY_UI_TOKEN)")
    ui.add_argument(
        "--read-only",
        action="store_true",
        help="serve no write at all: people cannot record feedback (every POST answers 405)",
    )
    ui.set_defaults(handler=ui_command)
    show = commands.add_parser(
        "show",
        parents=[parent],
        help="print a stored experiment's report (and check gates on it)",
    )
    show.add_argument("experiment")
    show.add_argument(
        "--errors",
        action="store_true",
        help="also print each evaluator's error messages, most frequent first, with a row id each",
    )
    show.add_argument(
        "--failing",
        action="store_true",
        help="also print the failing rows (target failure, evaluator error, or a score of 0) and why",
    )
    add_gate_arguments(show)
    show.set_defaults(handler=show_command)


def demo_command(args: argparse.Namespace) -> int:
    from assay.demo.run import run_demo

    run_demo(args.db)
    return 0


def ui_command(args: argparse.Namespace) -> int:
    from assay.store.open import open_store
    from assay.ui import serve

    checked = open_store(args.db)
    checked.require_whole()  # a damaged store's figures are not served as if whole
    checked.close()
    serve(args.db, host=args.host, port=args.port, token=args.token, read_only=args.read_only)
    return 0


def list_datasets(args: argparse.Namespace) -> int:
    from assay.client import Client

    table = Table("name", "examples", "version", "created")
    for dataset in Client(args.db).list_datasets():
        table.add_row(
            escape(dataset.name),
            str(dataset.example_count),
            str(dataset.version),
            f"{dataset.created_at:%Y-%m-%d %H:%M}",
        )
    Console().print(table)
    return 0


def list_experiments(args: argparse.Namespace) -> int:
    """Rows as stored/planned, so an interrupted experiment shows what it holds."""
    from assay.client import Client

    client = Client(args.db)
    client.store.require_whole()  # a damaged store's figures are not shown as if whole
    table = Table("name", "status", "rows", "created")
    for record in client.list_experiments():
        planned = record.num_examples * record.num_repetitions
        stored = client.store.count_rows(record.id)
        rows = str(stored) if stored == planned else f"{stored}/{planned}"
        status = _status(client.store, record)
        table.add_row(escape(record.name), escape(status), rows, f"{record.created_at:%Y-%m-%d %H:%M}")
    Console().print(table)
    return 0


def show_command(args: argparse.Namespace) -> int:
    import sys

    from assay.client import Client
    from assay.report.terminal import print_report

    client = Client(args.db)
    client.store.require_whole()  # a damaged store's figures are not shown as if whole
    results = client.read_experiment(experiment_name(client, args.experiment))
    tty = sys.stdout.isatty() and not args.json
    if tty:
        print_report(results)
    status = _status(client.store, results.experiment)
    if status != results.experiment.status:  # a split experiment: its figures cover the shards so far
        print(f"experiment {results.experiment.name}: {status}", file=sys.stderr)
    labels = _human_labels(client.store, results)
    code = conclude(results, args, reported=tty, extra=_human_json(labels) if args.json else None)
    if not args.json:
        _print_human(labels)
        _print_details(results, errors=args.errors, failing=args.failing)
    return code


def _human_labels(store: Any, results: Any) -> list[Any]:
    """People's labels (``assay.human``) on this experiment's rows: each annotator's latest."""
    from assay.human import human_labels

    return human_labels(store, [row.run.id for row in results.rows])


def _human_json(labels: list[Any]) -> dict[str, Any]:
    """``human``: per key the mean with its interval (or a label's counts); ``human_labels``:
    every annotator's latest label per row."""
    from assay.human.summary import human_records, human_summary

    return {"human": human_summary(labels), "human_labels": human_records(labels)}


def _print_human(labels: list[Any]) -> None:
    from assay.human.summary import human_lines

    lines = human_lines(labels)
    if lines:
        print("human feedback (each annotator's latest label; a row's annotators averaged):")
        print("\n".join(lines), flush=True)


_FAILING_SHOWN = 100


def _print_details(results: Any, *, errors: bool, failing: bool) -> None:
    """``--errors``: every evaluator's ten most frequent messages; ``--failing``: the first
    failing rows, each with its ids and why (read a page at a time, never all at once)."""
    from assay.report.errors import error_digest, error_lines

    if errors:
        lines = error_lines(error_digest(results, top=10))
        print("\n".join(lines) if lines else "errors: none", flush=True)
    if failing:
        from assay.cli._outputs import iter_failing

        shown = 0
        print("failing rows", flush=True)
        for run_id, example_id, repetition, reason in iter_failing(results):
            if shown == _FAILING_SHOWN:
                print(
                    f"  ... more: assay experiments export {results.experiment_name} has them all", flush=True
                )
                break
            print(f"  row {run_id} (example {example_id}, repetition {repetition}): {reason}", flush=True)
            shown += 1
        if not shown:
            print("  none", flush=True)


def _status(store: Any, record: Any) -> str:
    """The stored status, with the shards' progress for a split experiment not yet complete."""
    from assay.evaluation.shards import shard_progress

    progress = None if record.status == "completed" else shard_progress(store, record)
    return record.status if progress is None else f"{record.status} ({progress})"


def experiment_name(client: Any, name: str) -> str:
    """``name`` if stored, else a usage error suggesting the closest stored names."""
    if client.store.get_experiment(name=name) is not None:
        return name
    known = [record.name for record in client.list_experiments()]
    raise UsageError(f"no experiment named {name!r} in {client.store.url}{did_you_mean(name, known)}")
