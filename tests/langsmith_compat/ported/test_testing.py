"""Port of langsmith-sdk python/tests/unit_tests/test_testing.py, in our words.

Upstream calls the pytest plugin's private helpers (``_serde_example_values``,
``_get_example_id``, ``_TestCase``, ``_LangSmithTestSuite``) with mocks; here each is a
marked test file run by a real pytest subprocess, and the store it wrote is read back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from assay import Client

TESTS = """
import pytest
from assay import expect
from assay import testing as t


class Foo:
    def __init__(self, a, b):
        self.a, self.b = a, b


@pytest.fixture
def model():
    return object()  # a fixture value a test logs nothing about


@pytest.mark.langsmith
def test_odd_values():
    t.log_inputs({"foo": Foo(1, 2)})
    t.log_outputs({"y": Foo(3, 4)})


@pytest.mark.langsmith
def test_fixture_then_logged(model):
    t.log_inputs({"question": "fix typo"})


@pytest.mark.langsmith
def test_scored():
    t.log_feedback(key="quality", score=0.75)
    expect.score(0.9, key="similarity").to_be_greater_than(0.5)
"""


def _session(folder: Path) -> Client:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ASSAY_", "LANGSMITH_"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin",
         "--assay-db", "store/assay.db"],
        cwd=folder, capture_output=True, text=True, timeout=300, env=clean,
    )  # fmt: skip
    assert "3 passed" in done.stdout, done.stdout + done.stderr
    return Client(str(folder / "store" / "assay.db"))


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Client, list[str]]:
    """The file run twice (two sessions, two experiments, one dataset)."""
    folder = tmp_path_factory.mktemp("suite")
    (folder / "test_suite.py").write_text(TESTS, encoding="utf-8")
    _session(folder)
    client = _session(folder)
    names = sorted(record.name for record in client.list_experiments())
    return client, names


def _rows(client: Client, experiment: str) -> dict[str, object]:
    return {row.run.name: row for row in client.read_experiment(experiment).rows}


def test__serde_example_values(sessions: tuple[Client, list[str]]) -> None:
    client, names = sessions
    row = _rows(client, names[0])["test_odd_values"]
    assert isinstance(row.example.inputs["foo"], str)  # type: ignore[attr-defined]
    assert "Foo" in row.example.inputs["foo"]  # type: ignore[attr-defined]


def test__get_id(sessions: tuple[Client, list[str]]) -> None:
    """Documented difference: LangSmith derives a test's example id from its inputs and
    outputs; assay from the test (its file's dataset and node id), so a test stays one
    example, with versions, as its inputs change. Both are UUIDs, the same run to run."""
    client, names = sessions
    first, second = (_rows(client, name)["test_odd_values"] for name in names)
    assert isinstance(first.example.id, uuid.UUID)  # type: ignore[attr-defined]
    assert first.example.id == second.example.id  # type: ignore[attr-defined]


def test_log_inputs_updates_test_case_inputs(sessions: tuple[Client, list[str]]) -> None:
    """The inputs the test logged replace its parameters (a fixture here) in its example."""
    client, names = sessions
    row = _rows(client, names[-1])["test_fixture_then_logged"]
    assert row.example.inputs == {"question": "fix typo"}  # type: ignore[attr-defined]
    assert row.run.inputs == {"question": "fix typo"}  # type: ignore[attr-defined]


def test_pytest_feedback_includes_experiment_id_and_run_start_time(
    sessions: tuple[Client, list[str]],
) -> None:
    client, names = sessions
    experiment = client.read_project(project_name=names[0])
    row = _rows(client, names[0])["test_scored"]
    run = row.run  # type: ignore[attr-defined]
    feedback = list(client.list_feedback(run_ids=[run.id]))
    assert {(f.key, f.score) for f in feedback} >= {("quality", 0.75), ("similarity", 0.9), ("pass", 1)}
    assert {f.session_id for f in feedback} == {experiment.id}
    assert all(f.run_id == run.id for f in feedback)
    assert run.start_time is not None and run.start_time <= run.end_time
