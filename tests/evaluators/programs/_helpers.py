"""Shared by the stdin/stdout program tests."""

from __future__ import annotations

import os
from collections.abc import Callable

from assay.schemas import EvaluationResult, Run

BACKENDS = ["bubblewrap", "unshare", "rlimit"]
BENCH = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench", "programs"))

Judge = Callable[..., EvaluationResult]


def run_of(code: str) -> Run:
    return Run(name="candidate", run_type="chain", inputs={}, outputs={"text": code})
