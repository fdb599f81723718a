"""``DataTransformationEvaluator``: does the generated script turn the example's input
files into the expected table?

The example gives ``inputs["input_files"]`` (see ``_files``), the name of the file the
script must write (``inputs["output_file"]``, default ``output.csv``; CSV, JSON, JSONL or
Parquet by its extension) and the expected rows (``outputs["expected_output"]``: a list
of objects or ``{"columns", "rows"}``; optionally ``outputs["expected_schema"]``:
``{column: "int" | "float" | "number" | "string" | "bool"}``).

The script runs in the sandbox with the input files in its working folder (their names,
then the output name, are also in ``sys.argv``); pandas, pyarrow and polars are importable
there when they are installed. Three metrics: ``<name>`` (1 if the columns and rows
match, else 0), ``<name>_row_precision`` and ``<name>_row_recall``.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay.errors import CaseError, EvaluatorInputError
from assay.evaluation.evaluator import BaseEvaluator
from assay.evaluators.code._cases import code_from_run
from assay.evaluators.data._files import (
    Table,
    _OutputError,
    check_name,
    expected_table,
    format_of,
    input_files,
    parse_output,
)
from assay.evaluators.data._table_equality import (
    TableOptions,
    TableVerdict,
    check_schema,
    compare_tables,
)
from assay.evaluators.sql._values import Tolerance
from assay.sandbox import (
    DATA_TOOLS,
    Limits,
    SandboxConfig,
    ScriptRun,
    get_language,
    get_pool,
    require_ready,
    sandbox_site,
)
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

MARK = "\x1eassay-data "
SCRIPT = Path(__file__).with_name("_in_sandbox.py").read_text(encoding="utf-8")
PLACEHOLDER = 'PAYLOAD: dict[str, Any] = globals().get("PAYLOAD", {})'
MIB = 1024 * 1024


class DataTransformationEvaluator(BaseEvaluator):
    """Run a generated data script in the sandbox and compare what it wrote.

    Args:
        name: the key of the 1/0 metric (and prefix of the precision/recall ones).
        ordered: rows must come in the expected order.
        rel_tol, abs_tol: a non-integer number matches within ``rel_tol`` of the larger
            magnitude or within ``abs_tol``, whichever is wider (``math.isclose``);
            integers match exactly. ``tolerance`` sets both (the older spelling).
        column_order: columns must come in the expected order (names always must match,
            case-insensitively).
        nan_is_null: a NaN counts as NULL (pandas writes missing values as NaN).
        output_file: the default output name when the example gives none.
        timeout: seconds for the script (importing pandas in a fresh process takes a few).
        output_key: where the script is in ``run.outputs``.
        sandbox, limits: as for CodeCorrectnessEvaluator (the output may use up to
            ``limits.max_output_bytes``, raised to 8 MiB by default).
    """

    def __init__(
        self,
        name: str = "data_transformation",
        *,
        ordered: bool = False,
        rel_tol: float = 1e-6,
        abs_tol: float = 1e-6,
        tolerance: float | None = None,
        column_order: bool = False,
        nan_is_null: bool = True,
        output_file: str = "output.csv",
        timeout: float = 60.0,
        output_key: str | None = None,
        sandbox: SandboxConfig | None = None,
        limits: Limits | None = None,
    ) -> None:
        super().__init__(name=name)
        if tolerance is not None:
            rel_tol = abs_tol = tolerance
        if timeout <= 0 or min(rel_tol, abs_tol) < 0:
            raise ValueError("timeout must be positive, rel_tol and abs_tol >= 0")
        format_of(check_name(output_file, "output_file"), "output_file")
        self.options = TableOptions(ordered, Tolerance(rel_tol, abs_tol), column_order, nan_is_null)
        self.output_file, self.timeout, self.output_key = output_file, timeout, output_key
        self.sandbox_config = sandbox or SandboxConfig()
        self.limits = limits or Limits(max_output_bytes=8 * MIB)

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResults:
        inputs = dict(example.inputs) if example is not None and example.inputs else {}
        outputs = dict(example.outputs) if example is not None and example.outputs else {}
        files = input_files(inputs)
        output = check_name(inputs.get("output_file") or self.output_file, "example.inputs['output_file']")
        extension = format_of(output, "example.inputs['output_file']")
        if "expected_output" not in outputs:
            raise EvaluatorInputError(
                "DataTransformationEvaluator needs example.outputs['expected_output'] (the expected rows)"
            )
        expected = expected_table(outputs["expected_output"], "example.outputs['expected_output']")
        schema = check_schema(outputs.get("expected_schema"), "example.outputs['expected_schema']")
        options = replace(self.options, schema=schema)
        try:
            code = code_from_run(run, self.output_key, get_language("python"))
        except CaseError as exc:
            return self._results(TableVerdict(False, str(exc)), {})
        done = self._run(code, files, output)
        report = _report(done)
        verdict = _verdict(report, expected, output, extension, options)
        return self._results(verdict, _metadata(report, done, output))

    def _run(self, code: str, files: dict[str, bytes], output: str) -> ScriptRun:
        site = sandbox_site(DATA_TOOLS)
        pool = get_pool(site.config(self.sandbox_config))
        payload = {
            "site": site.path,
            "code": code,
            "output": output,
            "timeout": self.timeout,
            "inputs": {name: base64.b64encode(data).decode() for name, data in files.items()},
        }
        script = SCRIPT.replace(PLACEHOLDER, f"PAYLOAD = json.loads({json.dumps(payload)!r})", 1)
        done: ScriptRun = pool.run_script(get_language("python"), script, self.timeout + 10.0, self.limits)
        return done

    def _results(self, verdict: TableVerdict, metadata: dict[str, Any]) -> EvaluationResults:
        shared = {**metadata, **verdict.details, "reason": verdict.reason}
        return EvaluationResults(
            results=[
                EvaluationResult(
                    key=self.name, score=int(verdict.match), comment=verdict.reason, metadata=shared
                ),
                EvaluationResult(key=f"{self.name}_row_precision", score=verdict.precision),
                EvaluationResult(key=f"{self.name}_row_recall", score=verdict.recall),
            ]
        )


def _report(done: ScriptRun) -> dict[str, Any] | None:
    """The final report, None if the program died after getting ready (the generated
    code's doing); raises if it never got ready (the sandbox's)."""
    lines = require_ready(done, MARK, "the data script")
    return next((line for line in reversed(lines) if "exit" in line), None)


def _verdict(
    report: dict[str, Any] | None, expected: Table, output: str, extension: str, options: TableOptions
) -> TableVerdict:
    if report is None:
        return TableVerdict(
            False,
            "the script's run ended without a report (it may have killed its runner or flooded its output)",
        )
    if report.get("timed_out"):
        return TableVerdict(False, "the script timed out")
    if report.get("exit") != 0:
        return TableVerdict(
            False, f"the script failed (exit {report.get('exit')}): {str(report.get('log') or '')[-600:]}"
        )
    written = report.get("output") if isinstance(report.get("output"), dict) else {}
    assert isinstance(written, dict)
    if written.get("missing"):
        return TableVerdict(False, f"the script did not write {output}")
    try:
        actual = _actual_table(written, extension)
    except _OutputError as exc:
        return TableVerdict(False, str(exc))
    return compare_tables(expected, actual, options)


def _actual_table(written: dict[str, Any], extension: str) -> Table:
    if extension == ".parquet":
        rows = written.get("parquet")
        if not isinstance(rows, dict) or "error" in rows:
            problem = rows.get("error") if isinstance(rows, dict) else "no rows"
            raise _OutputError(f"the Parquet output cannot be read: {problem}")
        return parse_output(json.dumps(rows).encode(), extension)
    try:
        data = base64.b64decode(str(written.get("base64") or ""), validate=True)
    except ValueError:
        raise _OutputError("the output could not be brought back from the sandbox") from None
    return parse_output(data, extension)


def _metadata(report: dict[str, Any] | None, done: ScriptRun, output: str) -> dict[str, Any]:
    report = report or {}
    return {
        "output_file": output,
        "exit": report.get("exit"),
        "script_seconds": report.get("seconds"),
        "log": str(report.get("log") or "")[-2000:],
        "files_written_besides_output": report.get("changed") or [],
        "inputs_changed": report.get("inputs_changed") or [],
        "sandbox": done.sandbox,
        "output_truncated": done.output.truncated,
    }
