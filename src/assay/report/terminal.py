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

from assay.report.errors import error_digest, error_lines
from assay.report.plain import JUDGE_COLUMNS, judge_rows, where_kept
from assay.store.records import ExperimentRow

if TYPE_CHECKING:
    from assay.comparison import Comparison, MetricComparison
    from assay.report._shown import ShownResults

_ARROW = {"higher": "↑", "lower": "↓"}
_VERDICT_STYLE = {"better": "green", "worse": "red"}

__all__ = [
    "Progress",
    "comparison_lines",
    "comparison_table",
    "metrics_table",
    "print_comparison",
    "print_report",
    "summary_table",
]


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
                TextColumn("[bold]evaluating"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[errors]} errors"),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                transient=True,
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
            rate = f"{self.done / elapsed:,.0f} rows/s{_judge_limits()}"
            self._bar.update(self._task, advance=1, errors=self.errors, rate=rate)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()


def _judge_limits() -> str:
    """The adaptive limit of each judge model a server has rate-limited, for the bar."""
    limits = sys.modules.get("assay.llm._limits")  # not loaded: no judge in this process
    if limits is None:
        return ""
    shown = [
        f"{model}: {limiter.capacity} in flight"
        for (_, model), limiter in limits.all_limiters().items()
        if limiter.rate_limited
    ]
    return f"  judge limit {', '.join(shown)}" if shown else ""


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ci(low: float | None, high: float | None, method: str | None) -> str:
    if low is None or high is None:
        return "-"
    return f"[{low:.3f}, {high:.3f}] {method or ''}".rstrip()


def metrics_table(results: ShownResults) -> Table:
    """Per metric: which way is better, mean, 95% CI (method named), and the three outcomes:
    n scored, errors (the evaluator failed), skipped (the target failed)."""
    table = Table(title=f"experiment {escape(results.experiment_name)}", title_justify="left")
    for column in ("metric", "better", "mean", "95% CI", "n", "errors", "skipped"):
        table.add_column(column, justify="left" if column in ("metric", "95% CI") else "right")
    for key, agg in results.aggregate.items():
        table.add_row(
            escape(key),
            _ARROW[agg.direction],
            _fmt(agg.mean),
            _ci(agg.ci_low, agg.ci_high, agg.method),
            str(agg.n),
            str(agg.errors),
            str(agg.skipped),
        )
    return table


def _signed(value: float | None) -> str:
    if value is None:
        return "-"
    return "0 (equal)" if value == 0.0 else f"{value:+.3f}"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2g}" if value >= 1e-4 else "<1e-4"


def _comparison_row(metric: MetricComparison) -> list[str]:
    interval = metric.interval
    verdict = metric.verdict
    style = _VERDICT_STYLE.get(verdict)
    return [
        escape(metric.key),
        _ARROW[metric.direction],
        _fmt(metric.mean_a),
        _fmt(metric.mean_b),
        _signed(metric.difference),
        _ci(
            interval.low if interval else None,
            interval.high if interval else None,
            interval.method if interval else None,
        ),
        f"{_p(metric.p_value)} / {_p(metric.p_holm)}",
        escape(metric.test or "-"),
        _fmt(metric.mde),
        f"{metric.n_paired}"
        + (f" (+{metric.only_a} A, +{metric.only_b} B)" if metric.only_a or metric.only_b else ""),
        f"[{style}]{verdict}[/]" if style else verdict,
    ]


def comparison_table(comparison: Comparison) -> Table:
    a, b = comparison.a, comparison.b
    table = Table(
        title=f"{escape(b.name)} vs baseline {escape(a.name)} (paired by example)", title_justify="left"
    )
    columns = (
        "metric",
        "better",
        "mean A",
        "mean B",
        "B - A",
        "95% CI",
        "p / Holm p",
        "test",
        "MDE (80%)",
        "pairs",
        "verdict",
    )
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("metric", "95% CI", "test", "verdict") else "right"
        )
    for metric in comparison.metrics:
        table.add_row(*_comparison_row(metric))
    return table


def comparison_lines(comparison: Comparison) -> list[str]:
    """The comparison one metric at a time, every field on its own labelled line: for
    terminals too narrow for the table and for pipes, where nothing may be cut."""
    a, b = comparison.a, comparison.b
    lines = [f"{b.name} vs baseline {a.name} (paired by example)"]
    for metric in comparison.metrics:
        interval = metric.interval
        ci = _ci(
            interval.low if interval else None,
            interval.high if interval else None,
            interval.method if interval else None,
        )
        pairs = f"{metric.n_paired}" + (
            f" (+{metric.only_a} A only, +{metric.only_b} B only)" if metric.only_a or metric.only_b else ""
        )
        lines += [
            "",
            f"{metric.key}: {metric.verdict}",
            f"  better      {_ARROW[metric.direction]} {metric.direction}",
            f"  mean A      {_fmt(metric.mean_a)}",
            f"  mean B      {_fmt(metric.mean_b)}",
            f"  B - A       {_signed(metric.difference)}",
            f"  95% CI      {ci}",
            f"  p / Holm p  {_p(metric.p_value)} / {_p(metric.p_holm)}",
            f"  test        {metric.test or '-'}",
            f"  MDE (80%)   {_fmt(metric.mde)}",
            f"  pairs       {pairs}",
        ]
    return lines + [""]


def print_comparison(comparison: Comparison, console: Console | None = None) -> None:
    """The table when it fits the terminal whole; otherwise (a narrow terminal, a pipe,
    whose width is taken as 80) one metric at a time, so no name or verdict is cut."""
    console = console or Console()
    table = comparison_table(comparison)
    natural = console.measure(table, options=console.options.update(max_width=100_000)).maximum
    if console.is_terminal and natural <= console.width:
        console.print(table)
    else:
        for line in comparison_lines(comparison):
            console.print(escape(line), soft_wrap=True, highlight=False)
    for side, label in ((comparison.a, "A"), (comparison.b, "B")):
        console.print(
            f"{label}: {escape(side.name)}, {side.status}, {side.rows} rows, "
            f"{side.target_failures} target failures",
            soft_wrap=True,
        )
    if comparison.cluster_by:
        console.print(f"clustered by example metadata {escape(comparison.cluster_by)!r}")
    for warning in comparison.warnings:
        console.print(f"[yellow]note:[/] {escape(warning)}", soft_wrap=True)
    for check in comparison.verbosity:  # a flagged one is among the notes above
        if not check.flagged:
            console.print(escape(check.sentence(comparison.a.name, comparison.b.name)), soft_wrap=True)


def summary_table(results: ShownResults) -> Table | None:
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


def judges_table(results: ShownResults) -> Table | None:
    """Per judge: calls, tokens, cost, the share of repaired and unparsed replies."""
    rows = judge_rows(results)
    if not rows:
        return None
    table = Table(title="judges", title_justify="left")
    for column in JUDGE_COLUMNS:
        table.add_column(column, justify="left" if column == "judge" else "right")
    for row in rows:
        table.add_row(escape(row[0]), *row[1:])
    return table


def print_report(results: ShownResults, console: Console | None = None) -> None:
    console = console or Console()
    console.print(metrics_table(results))
    for line in error_lines(error_digest(results)):
        console.print(escape(line), soft_wrap=True, style="red" if line == "errors" else None)
    summary = summary_table(results)
    if summary is not None:
        console.print(summary)
    judges = judges_table(results)
    if judges is not None:
        console.print(judges)
    target_errors = results.target_errors
    rows = f"{len(results)} rows, {target_errors} target failures"
    usage = results.usage()
    if usage.get("total_tokens"):
        cost = f", ${usage['cost_usd']:.4f}" if usage.get("cost_usd") else ""
        rows += f", {int(usage['total_tokens']):,} judge tokens{cost}"
    console.print(
        f"{rows}. {escape(where_kept(results.experiment_name, results.store_url))}",
        soft_wrap=True,
    )
