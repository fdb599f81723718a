"""Every problem of the benchmark (bench/programs) end to end: each correct solution is
accepted and each wrong one gets the verdict written beside it, in every language."""

from __future__ import annotations

import sys
import warnings

import pytest

from assay.evaluators import ProgramEvaluator
from assay.sandbox import SandboxIsolationWarning
from assay.schemas import Example

from ._helpers import BENCH, run_of

sys.path.insert(0, BENCH)
from load import example_inputs, problems  # noqa: E402

PROBLEMS = problems()
CASES = [(p["name"], name) for p in PROBLEMS for name in p["solutions"]]


def test_the_set_has_what_the_issue_asks() -> None:
    assert len(PROBLEMS) >= 30
    assert sum(p["checker"] == "program" for p in PROBLEMS) >= 3  # several right answers
    assert sum(p["checker"] == "floats" for p in PROBLEMS) >= 3
    for problem in PROBLEMS:
        names = problem["solutions"]
        assert {"correct.py", "correct.cpp"} <= set(names), problem["name"]
        assert any(s["expect"] != "accepted" for s in names.values()), problem["name"]
    languages = {n.rsplit(".", 1)[1] for p in PROBLEMS for n in p["solutions"]}
    assert languages == {"py", "cpp", "java", "go", "js"}


@pytest.mark.slow
@pytest.mark.toolchains
@pytest.mark.parametrize(("problem", "solution"), CASES, ids=[f"{p}/{s}" for p, s in CASES])
def test_each_solution_gets_its_verdict(problem: str, solution: str) -> None:
    found = next(p for p in PROBLEMS if p["name"] == problem)
    spec = found["solutions"][solution]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        result = ProgramEvaluator().evaluate(
            run_of(spec["code"]), Example(inputs=example_inputs(found, solution), outputs={})
        )
    assert result.error is None, result.error
    assert result.metadata["verdict"] == spec["expect"], result.comment
    assert result.score == (1.0 if spec["expect"] == "accepted" else 0.0)
