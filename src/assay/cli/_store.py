"""``assay store check | backup | recover``: a store's integrity, safe copies, salvage."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from assay.cli._common import GATE_FAILED, PASSED, UsageError


def add_parsers(commands: Any, parent: argparse.ArgumentParser) -> None:
    store = commands.add_parser("store", parents=[parent], help="check, back up or recover the store")
    actions = store.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "check",
        parents=[parent],
        help="check the store file (exit 1 if damaged); --full also checks indexes, "
        "foreign keys and that each experiment's stored figures agree with its rows",
    )
    check.add_argument("--full", action="store_true", help="the thorough check (reads everything)")
    check.set_defaults(handler=check_command)
    backup = actions.add_parser(
        "backup", parents=[parent], help="copy the store safely, even while runs write it"
    )
    backup.add_argument("destination", help="the new file to write the copy to")
    backup.set_defaults(handler=backup_command)
    recover = actions.add_parser(
        "recover", parents=[parent], help="salvage what can be read of a damaged store into a new file"
    )
    recover.add_argument("destination", help="the new file to write what was read to")
    recover.set_defaults(handler=recover_command)


def check_command(args: argparse.Namespace) -> int:
    from assay.store import integrity

    path = _file(args, "check")
    problems = integrity.check(path, full=args.full)
    if not problems and args.full:
        problems = _figure_problems(args.db)
    what = "full check" if args.full else "quick check"
    if problems:
        print(integrity.corrupt_message(path, problems), file=sys.stderr)
        for problem in problems[:50]:
            print(f"  {problem}")
        return GATE_FAILED
    print(f"{path}: {what} passed")
    return PASSED


def backup_command(args: argparse.Namespace) -> int:
    from assay.store import integrity

    path = _file(args, "backup")
    pages = integrity.backup(path, args.destination)
    print(f"copied {path} to {args.destination} ({pages} pages), and checked the copy")
    return PASSED


def recover_command(args: argparse.Namespace) -> int:
    from assay.store.salvage import recover

    path = _file(args, "recover")
    copied = recover(path, args.destination)
    refigured = _refigure(args.destination)
    counts = ", ".join(f"{copied.get(t, 0)} {t}" for t in ("experiments", "runs", "results"))
    print(
        f"recovered what could be read of {path} into {args.destination} ({counts}; checked); "
        f"the figures of {refigured} experiment(s) were computed again from their rows. Compare "
        f"`assay experiments --db {args.destination}` with what you expect, then use it in "
        "place of the damaged file"
    )
    return PASSED


def _refigure(url: str) -> int:
    """Each experiment's figures from the rows that were recovered (some may be lost)."""
    from assay.client import Client
    from assay.evaluation.audit import recompute_figures

    client = Client(url)
    try:
        records = client.list_experiments()
        for record in records:
            recompute_figures(client.store, record)
        return len(records)
    finally:
        client.close()


def _file(args: argparse.Namespace, action: str) -> str:
    import os

    from assay.store.open import sqlite_file

    path = sqlite_file(args.db)
    if path is None:
        raise UsageError(
            f"assay store {action} works on a SQLite store file; a PostgreSQL server checks its own "
            "pages (data checksums, amcheck) and is backed up with pg_dump or pg_basebackup"
        )
    if not os.path.exists(path):
        raise UsageError(f"no store at {path}")
    return path


def _figure_problems(url: str | None) -> list[str]:
    """Each experiment's stored figures against its rows."""
    from assay.client import Client
    from assay.evaluation.audit import figure_mismatches

    client = Client(url)
    try:
        return [
            f"experiment {record.name!r}: {problem}"
            for record in client.list_experiments()
            for problem in figure_mismatches(client.store, record)
        ]
    finally:
        client.close()
