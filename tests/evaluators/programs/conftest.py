"""Fixtures for the stdin/stdout program tests: an evaluator on each sandbox backend, and
afterwards, nothing of a test left running."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from assay.evaluators import ProgramEvaluator
from assay.sandbox import SandboxConfig, SandboxIsolationWarning, get_pool
from assay.schemas import EvaluationResult, Example

from ._helpers import BACKENDS, Judge, run_of


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        pool = get_pool(SandboxConfig(backend=request.param))
    assert pool.stray_processes() == [], "processes of the test survived it"


@pytest.fixture
def judge(backend: str) -> Judge:
    """``judge(code, tests, **evaluator options)``: the evaluator's result."""

    def run(code: str, tests: Any, inputs: dict[str, Any] | None = None, **options: Any) -> EvaluationResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SandboxIsolationWarning)
            evaluator = ProgramEvaluator(sandbox=SandboxConfig(backend=backend), **options)
            result = evaluator.evaluate(
                run_of(code), Example(inputs={"tests": tests, **(inputs or {})}, outputs={})
            )
        assert isinstance(result, EvaluationResult)
        assert result.error is None, result.error
        return result

    return run
