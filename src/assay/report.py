"""The terminal: a progress bar while rows run, a table of metrics at the end."""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress as RichProgress
from rich.progress import TaskID
from rich.table import Table

from assay.store.records import ExperimentRow

if TYPE_CHECKING:
    from assay.evaluation._results import ExperimentResults

__all__ = ["Progress", "metrics_table", "print_report", "summary_table"]


class Progress:
    """Rows done of total, errors, rate and ETA; silent unless enabled (default: on a TTY)."""

    def __init__(self, total: int, done: int = 0, enabled: bool | None = None) -> None:
        self.enabled = sys.stdout.isatty() if enabled is None else enabled
        self.total, self.done, self.errors = total, done, 0
        self._started = time.perf_counter()
        self._lock = threading.Lock()
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("[bold]evaluating"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[errors]} errors"), TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(), transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("rows", total=self.total, completed=self.done, errors=0, rate="")
        return self

    def advance(self, row: ExperimentRow) -> None:
        """Called from worker threads as rows finish."""
        failed = row.run.error is not None or any(r.error for r in row.results)
        with self._lock:
            self.done += 1
            self.errors += failed
        if self._bar is not None and self._task is not None:
            elapsed = max(time.perf_counter() - self._started, 1e-9)
            self._bar.update(self._task, advance=1, errors=self.errors, rate=f"{self.done / elapsed:,.0f} rows/s")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def metrics_table(results: ExperimentResults) -> Table:
    table = Table(title=f"experiment {escape(results.experiment_name)}", title_justify="left")
    for column in ("metric", "mean", "95% CI", "n", "errors"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for key, agg in results.aggregate.items():
        ci = "-" if agg.ci_low is None else f"[{agg.ci_low:.3f}, {agg.ci_high:.3f}]"
        table.add_row(escape(key), _fmt(agg.mean), ci, str(agg.n), str(agg.errors))
    return table


def summary_table(results: ExperimentResults) -> Table | None:
    summary = results.summary_results.results
    if not summary:
        return None
    table = Table(title="summary evaluators", title_justify="left")
    for column in ("metric", "score", "value / error"):
        table.add_column(column, justify="right" if column == "score" else "left")
    for result in summary:
        shown = result.error if result.error else ("" if result.value is None else str(result.value))
        table.add_row(escape(result.key), _fmt(result.numeric_score), escape(shown))
    return table


def print_report(results: ExperimentResults, console: Console | None = None) -> None:
    console = console or Console()
    console.print(metrics_table(results))
    summary = summary_table(results)
    if summary is not None:
        console.print(summary)
    target_errors = results.target_errors
    rows = f"{len(results)} rows" + (f", {target_errors} target errors" if target_errors else "")
    usage = results.usage()
    if usage.get("total_tokens"):
        cost = f", ${usage['cost_usd']:.4f}" if usage.get("cost_usd") else ""
        rows += f", {int(usage['total_tokens']):,} judge tokens{cost}"
    console.print(
        f"{rows}. Stored as [bold]{escape(results.experiment_name)}[/] in {escape(results.store_url)}",
        soft_wrap=True,
    )
