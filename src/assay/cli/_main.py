"""The ``assay`` command line: parsing, dispatch, and one exit code per kind of outcome.

0 passed, 1 a gate failed (or `store check` found damage), 2 a usage or data error, 3 the
run failed at run time (a storage fault, a lost lease...: resumable), 130 interrupted
(docs/promises.md).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from assay._aio import interrupt_the_main_task
from assay.cli import _agreement, _browse, _compare, _rescore, _run, _serve, _store, _transfer
from assay.cli._common import (
    DB_HELP,
    INTERRUPTED,
    RUN_FAILED,
    USAGE_ERROR,
    RunFailed,
    UsageError,
    store_parent,
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"assay {version('assay')}"
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "assay (not installed)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assay", description="Local-first evaluation for LLM apps.")
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument("--db", metavar="URL", help=DB_HELP)
    parent = store_parent()
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _run.add_parser(commands, parent)
    _rescore.add_parser(commands, parent)
    _add_compare(commands, parent)
    _agreement.add_parser(commands, parent)
    _browse.add_parsers(commands, parent)
    _transfer.add_parsers(commands, parent)
    _store.add_parsers(commands, parent)
    _add_service(commands)
    return parser


def _add_service(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``assay serve-evaluators``: argparse only here; the server loads when it runs."""
    service = _serve.add_parser(commands)
    service.set_defaults(handler=_serve.main, writes=True)  # reads no store: skip its check


def _add_compare(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], parent: argparse.ArgumentParser
) -> None:
    """``assay compare A B``: the paired comparison's own command module."""
    _compare.add_parser(commands, parent)
    commands.choices["compare"].set_defaults(handler=_compare.run)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    writes = getattr(args, "writes", False) or args.command in ("run", "rescore")
    previous = _terminate_as_interrupt()
    try:
        if not writes:
            _require_store(args.db)
        code: int = args.handler(args)
        return code
    except KeyboardInterrupt as exc:
        message = str(exc) or "interrupted"
        print(message if message.startswith("interrupted") else f"interrupted: {message}", file=sys.stderr)
        return INTERRUPTED
    except RunFailed as exc:
        print(f"assay: error: {exc}", file=sys.stderr)
        return RUN_FAILED
    except Exception as exc:
        return _report_error(exc, getattr(args, "db", None))
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminate_as_interrupt() -> signal._HANDLER:
    """SIGTERM (a CI job cancelled) ends a run like Ctrl-C: rows kept, one line, resumable.

    A background job of a non-interactive shell (``assay run ... &`` in a CI script)
    starts with SIGINT ignored: there SIGTERM cancels the run itself, since raising an
    ignored SIGINT would do nothing."""

    def interrupt(signum: int, frame: object) -> None:
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.raise_signal(signal.SIGINT)
        elif not interrupt_the_main_task():
            raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)


def _require_store(url: str | None) -> None:
    """Read-only commands must not create an empty store at a mistyped path."""
    from assay.errors import StoreError
    from assay.store.open import default_url, store_exists

    if not store_exists(url):
        raise StoreError(f"no store at {url or default_url()}; run an experiment (or `assay demo`) first")


def _failed_at_run_time(exc: Exception) -> bool:
    """Store errors that are no fault of the command line: a write that failed, a lease
    lost to another process."""
    from assay.errors import LeaseFencedError, StorageFault, StoreWriteError

    return isinstance(exc, (StoreWriteError, LeaseFencedError, StorageFault))


def _report_error(exc: Exception, db: str | None) -> int:
    from assay.errors import (
        DataError,
        EvaluatorSignatureError,
        ExperimentError,
        MissingExtraError,
        StoreError,
    )
    from assay.store.faults import storage_fault
    from assay.store.open import sqlite_file

    fault = storage_fault(exc, sqlite_file(db) or db)
    if fault is not None:  # the disk, a lock, a damaged file: a run-time failure, resumable
        print(f"assay: error: {fault}", file=sys.stderr)
        return RUN_FAILED
    if _failed_at_run_time(exc):
        print(f"assay: error: {exc}", file=sys.stderr)
        return RUN_FAILED

    usage = (
        UsageError,
        MissingExtraError,  # a setup step to take (the message names the pip command), not a failed run
        DataError,
        EvaluatorSignatureError,
        ExperimentError,
        StoreError,
        LookupError,
        ValueError,
        TypeError,
    )
    if isinstance(exc, usage):
        print(f"assay: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print(f"assay: error: the run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return RUN_FAILED
