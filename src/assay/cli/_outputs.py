"""What a run leaves for CI: the verdict table, ``--json``, ``--junit-xml``, ``--markdown``
and the GitHub step summary (``$GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assay.cli._gates import Verdict
from assay.report.errors import error_lines
from assay.report.plain import plain_table

if TYPE_CHECKING:
    from assay.evaluation import ExperimentResults
    from assay.report.errors import MetricErrors
    from assay.store.records import ExperimentRow


def print_verdicts(verdicts: Sequence[Verdict]) -> None:
    if not verdicts:
        return
    rows = [[v.gate, "pass" if v.passed else "FAIL", v.detail] for v in verdicts]
    if sys.stdout.isatty():
        table = Table(title="gates", title_justify="left")
        for column in ("gate", "verdict", "detail"):
            table.add_column(column)
        for gate, verdict, detail in rows:
            style = "green" if verdict == "pass" else "bold red"
            table.add_row(escape(gate), f"[{style}]{verdict}[/]", escape(detail))
        Console().print(table)
    else:
        print(
            "\n".join(["gates", *plain_table(["gate", "verdict", "detail"], rows, numeric=False)]), flush=True
        )


def json_payload(
    results: ExperimentResults,
    verdicts: Sequence[Verdict],
    exit_code: int,
    digest: Sequence[MetricErrors] = (),
) -> dict[str, Any]:
    return {
        "experiment": results.experiment_name,
        "experiment_id": str(results.id),
        "store": results.store_url,
        "status": results.experiment.status,
        "rows": len(results),
        "target_errors": results.target_errors,
        "metrics": {key: agg.as_dict() for key, agg in results.aggregate.items()},
        "summary": {
            r.key: {"score": r.numeric_score, "value": r.value, "error": r.error}
            for r in results.summary_results.results
        },
        "errors": {
            m.metric: {
                "errors": m.errors,
                "given": m.given,
                "messages": [{"message": g.message, "count": g.count, "row_id": g.row_id} for g in m.groups],
            }
            for m in digest
        },
        "gates": [v.as_dict() for v in verdicts],
        "passed": all(v.passed for v in verdicts),
        "exit_code": exit_code,
    }


def print_json(payload: dict[str, Any]) -> None:
    print(json.dumps(payload, indent=2, default=str), flush=True)


def failing_rows(results: ExperimentResults) -> list[tuple[ExperimentRow, str]]:
    """Rows whose target or an evaluator failed, or with a score of 0 (a failed check)."""
    failing = []
    for row in results.rows:
        if row.run.error is not None:
            failing.append((row, f"target error: {row.run.error}"))
            continue
        reasons = [
            f"{r.key}: evaluator error: {r.error}" if r.error is not None else f"{r.key} = 0"
            for r in row.results
            if r.error is not None or r.numeric_score == 0
        ]
        if reasons:
            failing.append((row, "; ".join(reasons)))
    return failing


def iter_failing(results: ExperimentResults) -> Iterator[tuple[str, str, int, str]]:
    """Like ``failing_rows``, streamed: (run id, example id, repetition, why) per failing row."""
    from assay.report.errors import first_line

    for row in results:
        run = row["run"]
        repetition = int((run.extra or {}).get("repetition", 0))
        if run.error is not None:
            yield str(run.id), str(row["example"].id), repetition, f"target failure: {first_line(run.error)}"
            continue
        reasons = [
            f"{r.key}: {first_line(str(r.error))}" if r.error is not None else f"{r.key} = 0"
            for r in row["evaluation_results"]["results"]
            if r.error is not None or r.numeric_score == 0
        ]
        if reasons:
            yield str(run.id), str(row["example"].id), repetition, "; ".join(reasons)


def write_junit(
    path: Path, results: ExperimentResults, verdicts: Sequence[Verdict], digest: Sequence[MetricErrors] = ()
) -> None:
    """One testcase per gate, one per evaluator that errored (its most frequent messages),
    and one per failing row."""
    rows = failing_rows(results)
    suite = ET.Element(
        "testsuite",
        name=f"assay {results.experiment_name}",
        tests=str(len(verdicts) + len(digest) + len(rows)),
        failures=str(sum(not v.passed for v in verdicts) + len(digest) + len(rows)),
        errors="0",
    )
    for metric in digest:
        case = ET.SubElement(suite, "testcase", classname="assay.errors", name=metric.metric)
        text = "\n".join(error_lines([metric])[1:])
        ET.SubElement(case, "failure", message=f"{metric.errors} of {metric.given} rows errored").text = text
    for verdict in verdicts:
        case = ET.SubElement(suite, "testcase", classname="assay.gates", name=verdict.gate)
        if not verdict.passed:
            ET.SubElement(case, "failure", message=verdict.detail).text = verdict.detail
    for row, reason in rows:
        name = f"example {row.example.id} repetition {row.repetition}"
        case = ET.SubElement(suite, "testcase", classname=f"assay.rows.{results.experiment_name}", name=name)
        ET.SubElement(case, "failure", message=reason[:500]).text = reason
    path.parent.mkdir(parents=True, exist_ok=True)
    document = ET.Element("testsuites")
    document.append(suite)
    ET.ElementTree(document).write(path, encoding="utf-8", xml_declaration=True)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(
    results: ExperimentResults, verdicts: Sequence[Verdict], digest: Sequence[MetricErrors] = ()
) -> str:
    lines = [f"### assay: `{results.experiment_name}`", ""]
    if verdicts:
        passed = all(v.passed for v in verdicts)
        lines += [
            f"**{'All gates passed' if passed else 'Gate failed'}**",
            "",
            "| gate | verdict | detail |",
            "| --- | --- | --- |",
        ]
        lines += [
            f"| {_md(v.gate)} | {'pass' if v.passed else '**FAIL**'} | {_md(v.detail)} |" for v in verdicts
        ]
        lines.append("")
    lines += ["| metric | mean | 95% CI | n | errors |", "| --- | ---: | ---: | ---: | ---: |"]
    for key, agg in results.aggregate.items():
        mean = "-" if agg.mean is None else f"{agg.mean:.3f}"
        ci = "-" if agg.ci_low is None or agg.ci_high is None else f"[{agg.ci_low:.3f}, {agg.ci_high:.3f}]"
        lines.append(f"| {_md(key)} | {mean} | {ci} | {agg.n} | {agg.errors} |")
    for result in results.summary_results.results:
        score = "-" if result.numeric_score is None else f"{result.numeric_score:.3f}"
        lines.append(f"| {_md(result.key)} (summary) | {score} | | | {int(result.error is not None)} |")
    if digest:
        lines += ["", "| evaluator | errored rows | most frequent errors (row) |", "| --- | ---: | --- |"]
        for metric in digest:
            shown = "<br>".join(f"{g.count} x `{_md(g.message)}` ({g.row_id})" for g in metric.groups)
            lines.append(f"| {_md(metric.metric)} | {metric.errors} of {metric.given} | {shown} |")
    lines += [
        "",
        f"{len(results)} rows, {results.target_errors} target failures. Stored in `{results.store_url}`.",
        "",
    ]
    return "\n".join(lines)


def write_outputs(
    results: ExperimentResults,
    verdicts: Sequence[Verdict],
    digest: Sequence[MetricErrors] = (),
    *,
    junit: str | None,
    markdown_path: str | None,
) -> None:
    if junit:
        write_junit(Path(junit), results, verdicts, digest)
    text = markdown(results, verdicts, digest)
    if markdown_path:
        Path(markdown_path).parent.mkdir(parents=True, exist_ok=True)
        Path(markdown_path).write_text(text, encoding="utf-8")
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
