"""Ctrl-C (or SIGTERM) during an experiment: keep what is stored, say so in one line."""

from __future__ import annotations

import asyncio
from typing import NoReturn


class ExperimentInterrupted(KeyboardInterrupt):
    """The experiment was interrupted; its finished rows are stored and it can be resumed."""

    def __init__(self, message: str, experiment: str, stored: int, planned: int) -> None:
        super().__init__(message)
        self.message = message
        self.experiment = experiment
        self.stored = stored
        self.planned = planned

    def __str__(self) -> str:
        return self.message


def is_interrupt(exc: BaseException) -> bool:
    """A Ctrl-C arrives as KeyboardInterrupt, or as the cancellation asyncio.run makes of it."""
    return isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError))


def raise_interrupted(exc: BaseException, interrupted: ExperimentInterrupted) -> NoReturn:
    """A cancelled task stays cancelled (the message rides on its cause, which the sync
    face raises: there a cancel is Ctrl-C); a KeyboardInterrupt becomes ``interrupted``."""
    if isinstance(exc, asyncio.CancelledError):
        raise exc from interrupted
    raise interrupted from None


def interrupted_error(experiment: str, stored: int, planned: int, kind: str = "run") -> ExperimentInterrupted:
    if kind == "rescore":
        how = "resume by running the same `assay rescore` / evaluate_existing() again"
    else:
        how = "resume with `--resume` / `resume=True`"
    message = f"interrupted: {stored} of {planned} rows stored in {experiment}; {how}"
    return ExperimentInterrupted(message, experiment, stored, planned)


ExperimentInterrupted.__module__ = "assay.evaluation"  # the name users see in a traceback
