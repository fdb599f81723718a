"""The sandboxed business evaluators on the other backends: what works there, and what
cannot is an error (the evaluator's failure), never a score the code did not earn."""

from __future__ import annotations

import pytest

from assay.evaluators import APICallEvaluator, DataTransformationEvaluator, UnitTestGenerationEvaluator
from assay.sandbox import SandboxConfig
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

REFERENCE = "def double(x):\n    return x * 2\n"
SUITE = "from solution import double\n\ndef test_double():\n    assert double(3) == 6\n"
SPEC = {
    "openapi": "3.0.0",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/ping": {"get": {"responses": {"200": {"content": {"application/json": {"example": {"ok": True}}}}}}}
    },
}
CLIENT = (
    "import os, urllib.request\n"
    "print(urllib.request.urlopen(os.environ['API_BASE_URL'] + '/ping').read().decode())\n"
)


@pytest.mark.slow
def test_unit_tests_and_data_scripts_run_on_unshare() -> None:
    config = SandboxConfig(backend="unshare")
    tests = UnitTestGenerationEvaluator(max_mutants=2, sandbox=config).evaluate(
        Run(outputs={"output": SUITE}), Example(inputs={"reference": REFERENCE})
    )
    assert isinstance(tests, EvaluationResults)
    assert tests.results[0].score == 1 and tests.results[0].metadata["sandbox"]["backend"] == "unshare"
    data = DataTransformationEvaluator(sandbox=config).evaluate(
        Run(outputs={"output": "open('output.csv', 'w').write(open('in.csv').read())"}),
        Example(inputs={"input_files": {"in.csv": "x\n1\n"}}, outputs={"expected_output": [{"x": 1}]}),
    )
    assert isinstance(data, EvaluationResults) and data.results[0].score == 1


@pytest.mark.slow
def test_api_calls_without_a_usable_loopback_are_an_error_not_a_zero() -> None:
    """unshare's network namespace has its loopback down: the relay cannot listen."""
    result = APICallEvaluator(sandbox=SandboxConfig(backend="unshare")).evaluate(
        Run(outputs={"output": CLIENT}), Example(inputs={"openapi": SPEC})
    )
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and "could not be prepared for the API client" in result.error
    assert "unreachable" in result.error


def test_api_calls_refuse_a_backend_without_network_isolation() -> None:
    result = APICallEvaluator(sandbox=SandboxConfig(backend="rlimit")).evaluate(
        Run(outputs={"output": CLIENT}), Example(inputs={"openapi": SPEC})
    )
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and "needs a sandbox with its own network" in result.error


@pytest.mark.slow
def test_a_missing_package_in_the_sandbox_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The supervisor fails before any test runs: the evaluator's failure."""
    from assay.evaluators.unit_tests import _evaluator

    monkeypatch.setattr(
        _evaluator,
        "SCRIPT",
        _evaluator.SCRIPT.replace("import pytest  # noqa", "import pytest_nonexistent_module  # noqa"),
    )
    result = UnitTestGenerationEvaluator(max_mutants=1).evaluate(
        Run(outputs={"output": SUITE}), Example(inputs={"reference": REFERENCE})
    )
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and "pytest_nonexistent_module" in result.error
