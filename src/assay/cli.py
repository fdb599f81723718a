"""The ``assay`` command: demo, ui, and reading what the store holds."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assay import cli_compare
from assay.store.errors import StoreError
from assay.store.open import default_url, store_exists

__all__ = ["main"]


# Commands that only read: they must not create an empty store at a mistyped path.
_READERS = {"ui", "datasets", "experiments", "show", "compare"}


_DB_HELP = "store URL or path (default: $ASSAY_DATABASE_URL or ./.assay/assay.db)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assay", description="Local-first evaluation for LLM apps.")
    parser.add_argument("--db", metavar="URL", help=_DB_HELP)
    # `--db` is accepted after the command too (`assay ui --db x.db`).
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument("--db", metavar="URL", default=argparse.SUPPRESS, help=_DB_HELP)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", parents=[store], help="run the bundled demo experiment and print its report")
    ui = commands.add_parser("ui", parents=[store], help="serve the local web UI over the store")
    ui.add_argument("--host", default="127.0.0.1")
    ui.add_argument("--port", type=int, default=8765)
    ui.add_argument("--token", help="required for a non-loopback host (or set ASSAY_UI_TOKEN)")
    commands.add_parser("datasets", parents=[store], help="list datasets")
    commands.add_parser("experiments", parents=[store], help="list experiments")
    show = commands.add_parser("show", parents=[store], help="print a stored experiment's report")
    show.add_argument("experiment")
    cli_compare.add_parser(commands, store)
    from assay.service import cli as service_cli  # argparse only: the server loads when run

    service_cli.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler = {
        "demo": _demo, "ui": _ui, "datasets": _datasets, "experiments": _experiments, "show": _show,
        "compare": cli_compare.run,
        "serve-evaluators": _serve_evaluators,
    }[args.command]
    try:
        if args.command in _READERS and not store_exists(args.db):
            raise StoreError(f"no store at {args.db or default_url()}; run an experiment (or `assay demo`) first")
        return handler(args)
    except (LookupError, ValueError, StoreError) as exc:
        print(f"assay: error: {exc}", file=sys.stderr)
        return 2


def _demo(args: argparse.Namespace) -> int:
    from assay.demo.run import run_demo

    run_demo(args.db)
    return 0


def _ui(args: argparse.Namespace) -> int:
    from assay.ui import serve

    serve(args.db, host=args.host, port=args.port, token=args.token)
    return 0


def _serve_evaluators(args: argparse.Namespace) -> int:
    from assay.service import cli as service_cli

    return service_cli.main(args)


def _datasets(args: argparse.Namespace) -> int:
    from assay.client import Client

    table = Table("name", "examples", "version", "created")
    for dataset in Client(args.db).list_datasets():
        table.add_row(escape(dataset.name), str(dataset.example_count), str(dataset.version), f"{dataset.created_at:%Y-%m-%d %H:%M}")
    Console().print(table)
    return 0


def _experiments(args: argparse.Namespace) -> int:
    from assay.client import Client

    table = Table("name", "status", "rows", "created")
    for record in Client(args.db).list_experiments():
        rows = record.num_examples * record.num_repetitions
        table.add_row(escape(record.name), record.status, str(rows), f"{record.created_at:%Y-%m-%d %H:%M}")
    Console().print(table)
    return 0


def _show(args: argparse.Namespace) -> int:
    from assay.client import Client
    from assay.report import print_report

    print_report(Client(args.db).read_experiment(args.experiment))
    return 0


if __name__ == "__main__":
    sys.exit(main())
