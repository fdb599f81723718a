"""What every command shares: exit codes, the usage error, the ``--db`` option."""

from __future__ import annotations

import argparse

PASSED, GATE_FAILED, USAGE_ERROR, RUN_FAILED, INTERRUPTED = 0, 1, 2, 3, 130

DB_HELP = "store URL or path (default: $ASSAY_DATABASE_URL or ./.assay/assay.db)"


class UsageError(Exception):
    """Bad arguments, a missing module or file: exit code 2, the message on stderr."""


class RunFailed(Exception):
    """The run itself failed (not a gate): exit code 3."""


def store_parent() -> argparse.ArgumentParser:
    """``--db`` accepted after the command too (``assay ui --db x.db``)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--db", metavar="URL", default=argparse.SUPPRESS, help=DB_HELP)
    return parent
