"""A LangSmith-style pytest file (``@pytest.mark.langsmith``, ``t.log_*``, ``expect``,
``@unit``) runs under assay with only the import swapped, in a real pytest subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay import Client

# Written as LangSmith's docs write it; only the two import lines name assay.
LANGSMITH_STYLE = """
import pytest
from assay import testing as t  # was: from langsmith import testing as t
from assay import expect, unit  # was: from langsmith import expect, unit


def generate_sql(question):
    return "SELECT * FROM customers;" if "all users" in question else "SELECT 1;"


@pytest.mark.langsmith
def test_sql_generation_select_all() -> None:
    user_query = "Get all users from the customers table"
    t.log_inputs({"user_query": user_query})
    expected = "SELECT * FROM customers;"
    t.log_reference_outputs({"sql": expected})
    sql = generate_sql(user_query)
    t.log_outputs({"sql": sql})
    t.log_feedback(key="valid_sql", score=sql.endswith(";"))
    expect.edit_distance(sql, expected).to_be_less_than(0.5)
    expect(sql).to_contain("customers")


@pytest.mark.langsmith(output_keys=["expected"], metadata={"kind": "arithmetic"},
                       experiment_metadata={"model": "from-the-mark"})
@pytest.mark.parametrize("a, b, expected", [(1, 2, 3), (0.1, 0.2, 0.3), (2, 2, 5)])
def test_addition(a, b, expected):
    expect(a + b).to_be_approximately(expected, precision=2)


@unit
def test_unit_decorated():
    expect.score(0.8, key="similarity").to_be_greater_than(0.7)


def test_expect_is_a_plain_assertion_outside_a_marked_test():
    expect(2).to_equal(2)
    with pytest.raises(AssertionError, match="to be approximately"):
        expect(1.0).to_be_approximately(1.1)
"""


def _pytest(folder: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ASSAY_", "LANGSMITH_"))}
    return subprocess.run(
        # LangSmith's own plugin, where installed, keeps its mark: the swapped file runs without it.
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:langsmith_plugin",
            "--assay-db",
            "store/assay.db",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env={**clean, **env},
    )


@pytest.mark.slow
def test_a_langsmith_style_test_file_runs_with_only_the_import_swapped(tmp_path: Path) -> None:
    (tmp_path / "test_sql.py").write_text(LANGSMITH_STYLE, encoding="utf-8")
    done = _pytest(tmp_path, LANGSMITH_EXPERIMENT_METADATA=json.dumps({"model": "env", "team": "env"}))
    assert "1 failed, 5 passed" in done.stdout, done.stdout + done.stderr  # (2, 2, 5) fails
    client = Client(str(tmp_path / "store" / "assay.db"))
    (record,) = client.list_experiments()
    # The mark's experiment_metadata wins over the environment's; the plugin's keys stay.
    assert record.metadata["model"] == "from-the-mark" and record.metadata["team"] == "env"
    assert record.metadata["source"] == "pytest"
    results = client.read_experiment(record.name)
    assert len(results) == 5 and results.aggregate["pass"].mean == pytest.approx(4 / 5)
    rows = {row.run.name: row for row in results.rows}
    sql = rows["test_sql_generation_select_all"]
    assert sql.example.inputs == {"user_query": "Get all users from the customers table"}
    assert sql.run.outputs == {"sql": "SELECT * FROM customers;"}
    assert _scores(sql) >= {("valid_sql", 1), ("edit_distance", 0), ("expectation", 1)}
    # output_keys: the named parameters are the reference outputs, not inputs.
    wrong = rows["test_addition[2-2-5]"]
    assert wrong.example.inputs == {"a": 2, "b": 2} and wrong.example.outputs == {"expected": 5}
    assert wrong.example.metadata == {"kind": "arithmetic"}
    assert ("expectation", 0) in _scores(wrong)
    close = rows["test_addition[0.1-0.2-0.3]"]
    assert _scores(close) >= {("expectation", 1), ("pass", 1)}
    assert _scores(rows["test_unit_decorated"]) >= {("similarity", 0.8), ("similarity_expectation", 1)}
    assert "test_expect_is_a_plain_assertion_outside_a_marked_test" not in rows


def _scores(row: Any) -> set[tuple[str, float]]:
    return {(result.key, result.score) for result in row.results}


@pytest.mark.slow
def test_experiment_metadata_that_is_not_json_is_a_usage_error_naming_the_variable(tmp_path: Path) -> None:
    (tmp_path / "test_sql.py").write_text(LANGSMITH_STYLE, encoding="utf-8")
    done = _pytest(tmp_path, LANGSMITH_EXPERIMENT_METADATA="{model: v2}")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "$LANGSMITH_EXPERIMENT_METADATA is not valid JSON" in done.stderr
    assert not (tmp_path / "store").exists()  # nothing recorded


def test_the_top_level_names_are_langsmiths() -> None:
    import assay
    from assay.testing import expect, test, unit

    assert assay.expect is expect and assay.test is test and assay.unit is unit
    assert test.__test__ is False  # `from assay import test` in a test file is not collected
    with pytest.raises(AssertionError, match="Expected value to be approximately 1.1, but got 1.0"):
        expect(1.0).to_be_approximately(1.1)
    expect(1.004).to_be_approximately(1.0)  # rounded to 2 places
    expect(0.5).to_be_between(0, 1)
