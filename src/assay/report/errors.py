"""What went wrong, per evaluator: how many rows errored and the most frequent messages.

An error count alone ("18 errors") sends the reader to the database; the first line of the
most frequent distinct messages, each with one row to look at, usually says enough
("ConnectionError: judge unreachable"). The rows are read only when some metric has errors,
and the distinct messages kept per metric are bounded, so a run whose every message differs
(an id in each) costs bounded memory.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.report._shown import ShownResults

__all__ = ["ErrorGroup", "MetricErrors", "error_digest", "error_lines", "first_line"]

_DISTINCT_KEPT = 1000  # distinct messages counted per metric; later new ones count as "other"
_LINE_CHARS = 200


@dataclass(frozen=True)
class ErrorGroup:
    """One distinct error message (its first line), how often it came, and one row with it."""

    message: str
    count: int
    row_id: str


@dataclass(frozen=True)
class MetricErrors:
    """One evaluator's errors: ``errors`` of the ``given`` rows it was called on."""

    metric: str
    errors: int
    given: int
    groups: tuple[ErrorGroup, ...]

    @property
    def rate(self) -> float:
        return self.errors / self.given if self.given else 0.0

    @property
    def every_row(self) -> bool:
        return self.given > 0 and self.errors == self.given


def first_line(message: str) -> str:
    """The first non-empty line, cut to a readable length."""
    line = next((part.strip() for part in message.splitlines() if part.strip()), "(no message)")
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1] + "…"


def error_digest(results: ShownResults, top: int = 3) -> list[MetricErrors]:
    """Per metric with errors, in the report's order: the ``top`` most frequent messages."""
    erring = {key: agg for key, agg in results.aggregate.items() if agg.errors}
    if not erring:
        return []
    counts: dict[str, Counter[str]] = {key: Counter() for key in erring}
    example_row: dict[tuple[str, str], str] = {}
    for row in results:
        for result in row["evaluation_results"]["results"]:
            if result.error is None or result.key not in counts:
                continue
            message = first_line(str(result.error))
            counter = counts[result.key]
            if message not in counter and len(counter) >= _DISTINCT_KEPT:
                message = "(other messages)"
            counter[message] += 1
            example_row.setdefault((result.key, message), str(row["run"].id))
    return [
        MetricErrors(
            key,
            agg.errors,
            agg.n + agg.errors,
            tuple(
                ErrorGroup(message, count, example_row[(key, message)])
                for message, count in counts[key].most_common(top)
            ),
        )
        for key, agg in erring.items()
    ]


def error_lines(digest: list[MetricErrors]) -> list[str]:
    """The digest as plain lines: a heading per metric, then ``count x message (row id)``."""
    if not digest:
        return []
    lines = ["errors"]
    for metric in digest:
        lines.append(f"  {metric.metric}: {metric.errors} of {metric.given} rows errored")
        lines += [f"    {g.count} x {g.message} (row {g.row_id})" for g in metric.groups]
    return lines
