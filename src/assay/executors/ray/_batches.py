"""How many rows to send in one batch: enough that Ray's per-call cost (a few
milliseconds: scheduling, serialization, a round trip) is small next to the batch's
work, few enough that the last batches still spread over every worker."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from assay.evaluation.executor import PlannedRow


@dataclass
class Batch:
    """Rows sent together; re-sent whole when the worker running them died."""

    rows: list[PlannedRow]
    attempts: int = 0
    failed_on: int | None = None  # the worker it last failed on: retried elsewhere first


@dataclass
class BatchSizing:
    """Sizes from the measured time per row (recent batches count most).

    ``batch_seconds`` is the work one batch should hold. The first batches are small
    (``first``) since nothing is measured yet; a batch never holds more than
    ``max_rows``, nor more than its share of what remains over the slots in flight.
    """

    batch_seconds: float = 0.25
    first: int = 16
    max_rows: int = 4096
    row_seconds: float | None = field(default=None, init=False)

    def observe(self, rows: int, seconds: float) -> None:
        if rows <= 0:
            return
        measured = seconds / rows
        self.row_seconds = measured if self.row_seconds is None else 0.7 * self.row_seconds + 0.3 * measured

    def size(self, remaining: int, slots: int) -> int:
        if self.row_seconds is None:
            wanted = self.first
        else:
            wanted = int(self.batch_seconds / max(self.row_seconds, 1e-7))
        share = math.ceil(remaining / max(slots, 1))
        return max(1, min(wanted, self.max_rows, share))
