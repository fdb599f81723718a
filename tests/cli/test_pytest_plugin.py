"""The pytest plugin in a real pytest run (a subprocess), alone and under pytest-xdist."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli.conftest import run_assay

from assay import Client

TEST_QA = """
import pytest
from assay.testing import expect, log_feedback, log_inputs, log_outputs, log_reference_outputs


def app(question):
    return {"what is 2+2?": "4", "capital of France?": "Paris"}.get(question, "no idea")


@pytest.mark.assay
@pytest.mark.parametrize("question, answer", [("what is 2+2?", "4"), ("capital of France?", "Paris"), ("moon?", "rock")])
def test_answers(question, answer):
    log_inputs({"question": question})
    log_reference_outputs({"answer": answer})
    got = app(question)
    log_outputs({"answer": got})
    log_feedback(key="length", score=len(got))
    expect.edit_distance(got, answer).to_be_between(0, 1)
    expect(got).to_equal(answer)


@pytest.mark.assay(test_suite_name="smoke")
def test_with_a_suite_name():
    expect.score(0.9, key="quality").to_be_greater_than(0.5)


def test_not_marked():
    assert True
"""

TEST_MORE = """
import pytest


@pytest.mark.assay
@pytest.mark.parametrize("n", range(6))
def test_numbers(n):
    assert n % 3
"""


#: plugins of this test environment (not assay's, nor xdist): importing them took ~3 s of
#: CPU at each pytest start, in every run here and in each xdist worker
UNRELATED_PLUGINS = ("langsmith_plugin", "schemathesis", "hypothesispytest")


def pytest_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ASSAY_"))}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *(f"-pno:{name}" for name in UNRELATED_PLUGINS),
            "--assay-db",
            "store/assay.db",
            *args,
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "test_qa.py").write_text(TEST_QA, encoding="utf-8")
    (tmp_path / "test_more.py").write_text(TEST_MORE, encoding="utf-8")
    return tmp_path


def _check_store(folder: Path) -> None:
    client = Client(str(folder / "store" / "assay.db"))
    experiments = {record.name.rsplit("-", 1)[0]: record for record in client.list_experiments()}
    assert set(experiments) == {"test_qa", "smoke", "test_more"}, experiments
    assert all(record.status == "completed" for record in experiments.values())
    assert len({record.name.rsplit("-", 1)[1] for record in experiments.values()}) == 1  # one session
    qa = client.read_experiment(experiments["test_qa"].name)
    assert len(qa) == 3
    assert qa.aggregate["pass"].mean == pytest.approx(2 / 3)
    assert qa.aggregate["expectation"].n == 3 and qa.aggregate["expectation"].mean == pytest.approx(2 / 3)
    assert qa.aggregate["length"].mean == pytest.approx((1 + 5 + 7) / 3)
    assert qa.aggregate["edit_distance"].n == 3
    assert qa.aggregate["edit_distance"].direction == "lower"  # a distance: lower is better
    by_question = {row.example.inputs["question"]: row for row in qa.rows}
    moon = by_question["moon?"]
    assert moon.run.outputs == {"answer": "no idea"} and moon.example.outputs == {"answer": "rock"}
    failed = next(r for r in moon.results if r.key == "pass")
    assert failed.score == 0 and "no idea" in (failed.comment or "")
    more = client.read_experiment(experiments["test_more"].name)
    assert len(more) == 6 and more.aggregate["pass"].mean == pytest.approx(4 / 6)
    assert sorted(row.example.inputs["n"] for row in more.rows) == list(range(6))  # params as inputs
    smoke = client.read_experiment(experiments["smoke"].name)
    assert smoke.aggregate["quality"].mean == 0.9 and smoke.aggregate["pass"].mean == 1.0
    datasets = {d.name: d.example_count for d in client.list_datasets()}
    assert datasets == {"test_qa": 3, "smoke": 1, "test_more": 6}


@pytest.mark.slow
def test_a_session_records_one_experiment_per_file_and_creates_the_store(suite: Path) -> None:
    done = pytest_run(suite)
    assert done.returncode == 1, done.stdout  # the test outcomes are pytest's own
    assert "3 failed, 8 passed" in done.stdout, done.stdout
    _check_store(suite)
    # A second session: new experiments, the same datasets (examples keyed by test id).
    assert pytest_run(suite).returncode == 1
    client = Client(str(suite / "store" / "assay.db"))
    assert len(client.list_experiments()) == 6
    assert {d.name: d.example_count for d in client.list_datasets()}["test_qa"] == 3
    # The experiment is gated like any other.
    name = next(r.name for r in client.list_experiments() if r.name.startswith("smoke-"))
    assert (
        run_assay("show", name, "--db", "store/assay.db", "--fail-under", "pass=1", cwd=suite).returncode == 0
    )
    qa = next(r.name for r in client.list_experiments() if r.name.startswith("test_qa-"))
    assert (
        run_assay("show", qa, "--db", "store/assay.db", "--fail-under", "pass=1", cwd=suite).returncode == 1
    )


@pytest.mark.slow
def test_under_xdist_workers_write_one_store(suite: Path) -> None:
    done = pytest_run(suite, "-n", "2")
    assert "3 failed, 8 passed" in done.stdout, done.stdout + done.stderr
    _check_store(suite)


@pytest.mark.slow
def test_inert_without_marked_tests(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text(
        "import sys\n\ndef test_ok():\n    assert not [m for m in sys.modules if m.split('.')[0] == 'assay']\n",
        encoding="utf-8",
    )
    done = pytest_run(tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout  # assay not even imported
    assert not (tmp_path / "store").exists()
    off = pytest_run(tmp_path, "--assay-off", "-n", "2")
    assert off.returncode == 0 and not (tmp_path / "store").exists()


@pytest.mark.slow
def test_logging_outside_a_marked_test_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "test_unmarked.py").write_text(
        "from assay.testing import log_outputs\n\ndef test_x():\n    log_outputs({'a': 1})\n",
        encoding="utf-8",
    )
    done = pytest_run(tmp_path)
    assert done.returncode == 1 and "outside a test marked @pytest.mark.assay" in done.stdout


@pytest.mark.slow
def test_the_readme_example_runs_as_written(tmp_path: Path) -> None:
    import re

    readme = (Path(__file__).resolve().parents[2] / "docs" / "ci.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "@pytest.mark.assay" in b)
    (tmp_path / "my_app.py").write_text(
        "def answer(question):\n    return {'2+2?': '4', 'capital of France?': 'Paris'}[question]\n",
        encoding="utf-8",
    )
    (tmp_path / "test_app.py").write_text(block, encoding="utf-8")
    done = pytest_run(tmp_path)
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout
    client = Client(str(tmp_path / "store" / "assay.db"))
    (record,) = client.list_experiments()
    results = client.read_experiment(record.name)
    assert record.name.startswith("test_app-") and results.aggregate["pass"].mean == 1.0
    assert set(results.aggregate) == {
        "pass",
        "length",
        "edit_distance",
        "edit_distance_expectation",
        "expectation",
    }
