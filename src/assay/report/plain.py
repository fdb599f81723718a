"""The report as plain text, for CI logs and pipes: the terminal report's content, no colour
codes, one line a metric."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.report._shown import ShownResults

__all__ = ["closing_line", "metric_lines", "plain_report", "plain_table", "summary_lines"]


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def plain_table(header: list[str], rows: list[list[str]], numeric: bool = True) -> list[str]:
    """Columns two spaces apart: the first left-aligned, the others right-aligned when
    ``numeric`` (numbers line up), else left-aligned."""
    table = [header, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return [
        "  ".join(
            cell.rjust(width) if numeric and i else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in table
    ]


def metric_lines(results: ShownResults) -> list[str]:
    """The terminal table's columns: which way is better, mean, 95% CI with its method,
    n scored, errors (the evaluator failed), skipped (the target failed)."""
    rows = []
    for key, agg in results.aggregate.items():
        ci = (
            "-"
            if agg.ci_low is None or agg.ci_high is None
            else f"[{agg.ci_low:.3f}, {agg.ci_high:.3f}] {agg.method or ''}"
        )
        rows.append(
            [key, agg.direction, _fmt(agg.mean), ci.rstrip(), str(agg.n), str(agg.errors), str(agg.skipped)]
        )
    return plain_table(["metric", "better", "mean", "95% CI", "n", "errors", "skipped"], rows)


def summary_lines(results: ShownResults) -> list[str]:
    rows = []
    for result in results.summary_results.results:
        shown = result.error if result.error else ("" if result.value is None else str(result.value))
        rows.append([result.key, _fmt(result.numeric_score), shown.replace("\n", " ")])
    return plain_table(["summary metric", "score", "value / error"], rows) if rows else []


JUDGE_COLUMNS = ["judge", "calls", "cached", "tokens", "cost", "repaired", "unparsed"]


def judge_rows(results: ShownResults) -> list[list[str]]:
    """Per judge: calls (cached), tokens, cost, and the share of its judgements whose reply
    needed a repair or never parsed (an error, never a score). None without judges."""
    if not results.usage().get("calls"):
        return []
    rows = []
    for key, usage in sorted(results.judge_usage().items()):
        judgements = usage.get("judgements") or 1
        cost = usage.get("cost_usd")
        rows.append(
            [
                key,
                f"{int(usage.get('calls', 0)):,}",
                f"{int(usage.get('cached_calls', 0)):,}",
                f"{int(usage.get('total_tokens', 0)):,}",
                f"${cost:.4f}" if cost else "-",
                f"{usage.get('repaired', 0) / judgements:.1%}",
                f"{usage.get('unparsed', 0) / judgements:.1%}",
            ]
        )
    return rows


def closing_line(results: ShownResults) -> str:
    target_errors = results.target_errors
    rows = f"{len(results)} rows" + (f", {target_errors} target failures" if target_errors else "")
    usage = results.usage()
    if usage.get("total_tokens"):
        cost = f", ${usage['cost_usd']:.4f}" if usage.get("cost_usd") else ""
        rows += f", {int(usage['total_tokens']):,} judge tokens{cost}"
    return f"{rows}. {where_kept(results.experiment_name, results.store_url)}"


def where_kept(experiment: str, store_url: str) -> str:
    """Where the experiment went: a store, or memory only (``upload_results=False``)."""
    if store_url in MEMORY_URLS:
        return f"Kept in memory only as {experiment} (upload_results=False): nothing was stored"
    return f"Stored as {experiment} in {store_url}"


MEMORY_URLS = ("sqlite://", "sqlite://:memory:")


def plain_report(results: ShownResults) -> str:
    from assay.report.errors import error_digest, error_lines

    lines = [f"experiment {results.experiment_name}", *metric_lines(results)]
    lines += error_lines(error_digest(results))
    summary = summary_lines(results)
    if summary:
        lines += ["", *summary]
    judges = judge_rows(results)
    if judges:
        lines += ["", *plain_table(JUDGE_COLUMNS, judges)]
    lines.append(closing_line(results))
    return "\n".join(lines)
