"""DataTransformationEvaluator on real scripts in the sandbox: right, wrong, sloppy and
hostile ones, CSV / JSON / JSONL / Parquet, and bad examples."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.evaluators import DataTransformationEvaluator
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

SALES = "region,amount\nnorth,10\nsouth,5\nnorth,2.5\nwest,\n"
EXPECTED = [
    {"region": "north", "total": 12.5},
    {"region": "south", "total": 5},
    {"region": "west", "total": None},
]
STDLIB = """import csv, sys
totals = {}
for row in csv.DictReader(open("sales.csv")):
    if row["amount"] == "":
        totals.setdefault(row["region"], None)
        continue
    totals[row["region"]] = (totals.get(row["region"]) or 0) + float(row["amount"])
with open(sys.argv[-1], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["region", "total"])
    for region in sorted(totals, reverse=True):
        w.writerow([region, "" if totals[region] is None else totals[region]])
"""
PANDAS = """import pandas as pd
df = pd.read_csv("sales.csv")
out = df.groupby("region", as_index=False)["amount"].sum(min_count=1)
out.rename(columns={"amount": "total"}).to_csv("totals.csv", index=False)
"""


def example(**overrides: Any) -> Example:
    inputs = {"input_files": {"sales.csv": SALES}, "output_file": "totals.csv"}
    outputs: dict[str, Any] = {"expected_output": EXPECTED}
    for key, value in overrides.items():
        (outputs if key.startswith("expected") else inputs)[key] = value
    return Example(inputs=inputs, outputs=outputs)


def score(code: Any, ex: Example | None = None, **kwargs: Any) -> dict[str, EvaluationResult]:
    results = DataTransformationEvaluator(**kwargs).evaluate(
        Run(outputs=None if code is None else {"output": code}), ex or example()
    )
    assert isinstance(results, EvaluationResults), results
    return {r.key.removeprefix("data_transformation").lstrip("_") or "match": r for r in results.results}


@pytest.mark.slow
def test_a_right_script_matches_with_nulls_and_numbers() -> None:
    result = score(STDLIB)
    assert result["match"].score == 1, result["match"].comment
    assert result["row_precision"].score == result["row_recall"].score == 1.0
    assert result["match"].metadata["sandbox"]["backend"] == "bubblewrap"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is an extra")
def test_a_pandas_script_runs_in_the_sandbox() -> None:
    result = score(PANDAS)
    assert result["match"].score == 1, result["match"].comment


@pytest.mark.slow
def test_a_wrong_script_shows_the_first_differences_and_partial_credit() -> None:
    wrong = STDLIB.replace('(totals.get(row["region"]) or 0) + float', "float")
    result = score(wrong)
    assert result["match"].score == 0
    assert result["row_precision"].score == pytest.approx(2 / 3)
    assert result["row_recall"].score == pytest.approx(2 / 3)
    assert result["match"].metadata["missing_rows"] == [["north", 12.5]]
    assert result["match"].metadata["unexpected_rows"] == [["north", 2.5]]


@pytest.mark.slow
def test_order_tolerance_and_schema_options() -> None:
    assert score(STDLIB, ordered=True)["match"].score == 0  # it writes regions reversed
    ordered = score(STDLIB, ordered=True)["match"]
    assert ordered.metadata["first_order_difference"] == 0
    near = [dict(row, total=row["total"] + 1e-9 if row["total"] else None) for row in EXPECTED]
    assert score(STDLIB, example(expected_output=near))["match"].score == 1
    assert score(STDLIB, example(expected_output=near), tolerance=0)["match"].score == 0
    typed = score(STDLIB, example(expected_schema={"region": "string", "total": "int"}))["match"]
    assert typed.score == 0 and "column 'total' should hold int values" in (typed.comment or "")
    assert score(STDLIB, example(expected_schema={"region": "string", "total": "number"}))["match"].score == 1


@pytest.mark.slow
def test_schema_differences_are_named() -> None:
    renamed = STDLIB.replace('["region", "total"]', '["region", "sum"]')
    result = score(renamed)["match"]
    assert result.score == 0 and "missing ['total']" in (result.comment or "")
    assert "unexpected ['sum']" in (result.comment or "")


JSON_OUT = """import csv, json
rows = [{"region": r["region"], "amount": float(r["amount"]) if r["amount"] else None}
        for r in csv.DictReader(open("sales.csv"))]
with open("out.json", "w") as f:
    json.dump(rows, f)
with open("out.jsonl", "w") as f:
    f.writelines(json.dumps(r) + "\\n" for r in rows)
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["out.json", "out.jsonl"])
def test_json_and_jsonl_outputs(name: str) -> None:
    expected = [
        {"region": "north", "amount": 10},
        {"region": "south", "amount": 5.0},
        {"region": "north", "amount": 2.5},
        {"region": "west", "amount": None},
    ]
    result = score(JSON_OUT, example(output_file=name, expected_output=expected))
    assert result["match"].score == 1, result["match"].comment


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow is optional")
def test_parquet_in_and_out(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = tmp_path / "sales.parquet"
    pq.write_table(pa.table({"region": ["north", "south"], "amount": [1.5, 2.0]}), source)
    code = (
        "import pyarrow.parquet as pq, pyarrow.compute as pc\n"
        't = pq.read_table("sales.parquet")\n'
        'pq.write_table(t.set_column(1, "amount", pc.multiply(t["amount"], 2)), "out.parquet")\n'
    )
    ex = example(
        input_files={"sales.parquet": {"path": str(source)}},
        output_file="out.parquet",
        expected_output=[{"region": "north", "amount": 3.0}, {"region": "south", "amount": 4.0}],
    )
    assert score(code, ex)["match"].score == 1


HOSTILE = """import os
for target in ("/etc/assay-owned", "/tmp/assay-owned", "../assay-owned", "/work/assay-owned"):
    try:
        with open(target, "w") as f:
            f.write("owned")
    except OSError:
        pass
with open("sales.csv", "w") as f:   # overwrite an input
    f.write("region,amount\\n")
with open("scratch.txt", "w") as f:
    f.write("x")
with open("totals.csv", "w") as f:
    f.write("region,total\\nnorth,12.5\\nsouth,5\\nwest,\\n")
"""


@pytest.mark.slow
def test_a_script_writing_outside_its_output_is_contained_and_reported() -> None:
    result = score(HOSTILE)["match"]
    assert result.score == 1  # the output itself is right
    assert result.metadata["inputs_changed"] == ["sales.csv"]
    assert "scratch.txt" in result.metadata["files_written_besides_output"]
    for path in ("/etc/assay-owned", "/tmp/assay-owned", "/work/assay-owned"):
        assert not Path(path).exists()


@pytest.mark.slow
def test_failures_of_the_script_are_scores_with_reasons() -> None:
    crash = score("raise ValueError('bad data')")["match"]
    assert crash.score == 0 and "ValueError: bad data" in (crash.comment or "")
    assert "main.py" not in (crash.comment or "")  # the runner's own frame is hidden
    silent = score("print('done')")["match"]
    assert silent.score == 0 and "did not write totals.csv" in (silent.comment or "")
    hang = score("while True:\n    pass\n", timeout=1.0)["match"]
    assert hang.score == 0 and "timed out" in (hang.comment or "")
    garbage = score("open('totals.csv', 'w').write('a,b\\n1\\n')")["match"]
    assert garbage.score == 0 and "CSV line 2 has 1 fields" in (garbage.comment or "")
    assert score(None)["match"].score == 0


@pytest.mark.parametrize(
    ("ex", "field"),
    [
        (
            Example(inputs={"output_file": "t.csv"}, outputs={"expected_output": EXPECTED}),
            "example.inputs['input_files']",
        ),
        (
            example(input_files={"sales.csv": {"path": "/nonexistent/sales.csv"}}),
            "the input file '/nonexistent/sales.csv' does not exist",
        ),
        (
            Example(inputs={"input_files": {"sales.csv": SALES}}, outputs={}),
            "example.outputs['expected_output']",
        ),
        (example(output_file="../../etc/passwd.csv"), "must be a relative path"),
        (example(output_file="totals.xlsx"), "has no known format"),
        (example(expected_schema={"total": "decimal"}), "example.outputs['expected_schema']"),
    ],
)
def test_a_bad_example_is_an_error_naming_the_field_before_anything_runs(ex: Example, field: str) -> None:
    result = DataTransformationEvaluator().evaluate(Run(outputs={"output": STDLIB}), ex)
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and field in result.error


@pytest.mark.slow
def test_through_evaluate() -> None:
    scripts = {"good": STDLIB, "bad": "print('no output')"}
    results = assay.evaluate(
        lambda inputs: {"output": scripts[inputs["which"]]},
        data=[
            {
                "inputs": {"which": w, "input_files": {"sales.csv": SALES}, "output_file": "totals.csv"},
                "outputs": {"expected_output": EXPECTED},
            }
            for w in ("good", "bad")
        ],
        evaluators=[DataTransformationEvaluator()],
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    rows = [{r.key: r.score for r in row["evaluation_results"]["results"]} for row in results]
    assert [row["data_transformation"] for row in rows] == [1, 0]
