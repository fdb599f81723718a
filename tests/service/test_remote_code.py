"""A remote code-correctness evaluation equals the local one on the same rows: the built-in
evaluator served as ``--builtin`` does, the candidates running in the server's sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_testing import LiveService, without

from assay.client import Client
from assay.evaluation import evaluate
from assay.evaluators import CodeCorrectnessEvaluator
from assay.service import RemoteEvaluator
from assay.service.builtins import builtin_evaluators

SQUARE_CASES = [
    {"input": 2, "expected_output": 4},
    {"input": -3, "expected_output": 9},
    {"input": 0, "expected_output": 0},
]
HUMANEVAL_LIKE = {
    "prompt": 'def add(a, b):\n    """Return a + b."""\n',
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n",
    "entry_point": "add",
}
CANDIDATES = {  # every verdict the evaluator can give: pass, partial, fail, crash, no code...
    "square_right": ({"test_cases": SQUARE_CASES}, "def solution(n):\n    return n * n"),
    "square_partial": ({"test_cases": SQUARE_CASES}, "def solution(n):\n    return abs(n) * 2 if n else 0"),
    "square_syntax_error": ({"test_cases": SQUARE_CASES}, "def solution(n) return n"),
    "square_raises": ({"test_cases": SQUARE_CASES}, "def solution(n):\n    raise KeyError(n)"),
    "square_wrong_name": ({"test_cases": SQUARE_CASES}, "def other(n):\n    return n * n"),
    "square_no_code": ({"test_cases": SQUARE_CASES}, ""),
    "program_pass": (HUMANEVAL_LIKE, "    return a + b\n"),
    "program_fail": (HUMANEVAL_LIKE, "    return a - b\n"),
    "javascript": (
        {"test_cases": SQUARE_CASES, "language": "javascript"},
        "function solution(n) { return n * n; }",
    ),
}
TIMINGS = without({"duration_ms", "traceback", "cpu_ms", "wall_ms"})


@pytest.fixture(scope="module")
def service() -> Iterator[LiveService]:
    # Served as `assay serve-evaluators --builtin code_correctness` serves it.
    with LiveService(builtin_evaluators(["code_correctness"])) as live:
        yield live


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"text": CANDIDATES[inputs["case"]][1]}


def stored_results(client: Client, evaluator: Any, prefix: str) -> dict[str, Any]:
    data = [{"inputs": {"case": case, **inputs}, "outputs": {}} for case, (inputs, _) in CANDIDATES.items()]
    ran = evaluate(
        target,
        data=data,
        evaluators=[evaluator],
        experiment_prefix=prefix,
        client=client,
        max_concurrency=2,
        progress=False,
    )
    found = {}
    for row in client.read_experiment(ran.experiment_name):
        [result] = row["evaluation_results"]["results"]
        found[row["example"].inputs["case"]] = TIMINGS(result.model_dump(exclude={"source_run_id"}))
    return found


@pytest.mark.slow
def test_remote_code_correctness_equals_local(service: LiveService, tmp_path: Path) -> None:
    client = Client(str(tmp_path / "code.db"))
    try:
        local = stored_results(client, CodeCorrectnessEvaluator(), "local")  # the served defaults
        remote = stored_results(
            client, RemoteEvaluator(service.url, "code_correctness", timeout=60), "remote"
        )
    finally:
        client.close()
    for case in CANDIDATES:
        local[case]["key"] = remote[case]["key"]  # the one intended difference: the served name
    assert set(remote) == set(CANDIDATES)
    differing = [case for case in CANDIDATES if remote[case] != local[case]]
    assert differing == [], {case: (local[case], remote[case]) for case in differing}
    assert remote["square_right"]["score"] == 1.0 and remote["program_fail"]["score"] == 0.0
    assert 0 < remote["square_partial"]["score"] < 1
    assert remote["square_raises"]["score"] == 0.0 and remote["square_syntax_error"]["score"] == 0.0
    assert all(remote[case]["error"] is None for case in CANDIDATES)  # code failures are scores
