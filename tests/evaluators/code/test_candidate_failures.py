"""Whatever a candidate's value or behaviour does to the parent is the candidate's failure:
scored 0 with the reason, never an excluded error (which a hedging model would exploit)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import pytest

import assay
from assay.evaluation import EvaluationResult
from assay.evaluators import CodeCorrectnessEvaluator, pass_at_k
from assay.sandbox import SandboxConfig
from assay.schemas import Example, Run
from assay.store._json import dumps, loads

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py
BACKENDS = fixtures.BACKENDS


pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

Evaluate = Callable[..., EvaluationResult]


@pytest.fixture(params=BACKENDS)
def evaluate(request: pytest.FixtureRequest) -> Evaluate:
    evaluator = CodeCorrectnessEvaluator(
        execution_timeout=10, sandbox=SandboxConfig(backend=request.param, workers=1)
    )

    def run(code: str, cases: list[dict[str, Any]], **inputs: Any) -> EvaluationResult:
        example = Example(inputs={"test_cases": cases, **inputs})
        result = evaluator.evaluate(Run(outputs={"text": code}), example)
        assert isinstance(result, EvaluationResult)
        return result

    return run


def assert_failed_and_storable(result: EvaluationResult, reason: str = "") -> None:
    assert result.error is None, result.error
    assert result.score == 0.0
    details = result.metadata["test_cases_details"]
    assert details and not any(d["passed"] for d in details)
    if reason:
        assert reason in json.dumps([d["error_message"] for d in details] + [result.comment])
    assert loads(dumps(result.metadata))["test_cases_details"][0]["passed"] is False


CASES = [
    {"input": 2, "expected_output": 4},
    {"input": 3, "expected_output": 1.5},
    {"input": 4, "expected_output": [1, 2]},
    {"input": 5, "expected_output": "five"},
]


def test_a_huge_integer_fails_every_kind_of_case(evaluate: Evaluate) -> None:
    result = evaluate("def solution(x):\n    return 10 ** 5000\n", CASES)
    assert_failed_and_storable(result)
    assert "about 5001 digits" in (result.comment or "")


def test_a_huge_javascript_bigint_fails(evaluate: Evaluate) -> None:
    result = evaluate("function solution(x) { return 10n ** 5000n; }", CASES, language="javascript")
    assert_failed_and_storable(result)


FORGED_REPLIES = {
    "nested 200,000 deep": b"[" * 200_000 + b"]" * 200_000,
    "a list, not a reply": b"[1, 2]",
    "a bare string": b'"ok"',
    "odd field types": b'{"ok": false, "error_type": [1], "message": {"a": 1}, "traceback": 7}',
    "an int of 5000 decimal digits": b'{"ok": true, "value": ' + b"9" * 5000 + b"}",
    "an int of 30000 hex digits": b'{"ok": true, "value": {"$int": "' + b"f" * 30000 + b'"}}',
    "an unknown tag": b'{"ok": true, "value": {"$object": "os.system"}}',
    "not JSON": b"\xff\xfe{",
}


@pytest.mark.parametrize("payload", list(FORGED_REPLIES.values()), ids=list(FORGED_REPLIES))
def test_a_forged_reply_frame_is_a_failure(evaluate: Evaluate, payload: bytes) -> None:
    code = (
        "import os, struct\n"
        "def solution(x):\n"
        f"    body = {payload!r}\n"
        "    os.write(4, struct.pack('>I', len(body)) + body)\n"
        "    os._exit(0)\n"
    )
    assert_failed_and_storable(evaluate(code, CASES[:1]))


@pytest.mark.parametrize(
    "payload", [b'"ready"', b"[1]", b"[" * 100_000 + b"]" * 100_000], ids=["string", "list", "deep"]
)
def test_a_forged_first_frame_is_a_load_failure(evaluate: Evaluate, payload: bytes) -> None:
    code = (
        "import os, struct\n"
        f"body = {payload!r}\n"
        "os.write(4, struct.pack('>I', len(body)) + body)\n"
        "os._exit(0)\n"
        "def solution(x):\n    return 4\n"
    )
    result = evaluate(code, CASES[:1])
    assert result.error is None and result.score == 0.0
    assert result.metadata["overall_execution_success"] is False


def test_javascript_forged_frames_are_failures(evaluate: Evaluate) -> None:
    code = (
        "const fs = require('fs');\n"
        "function solution(x) {\n"
        "  const body = Buffer.from('['.repeat(200000) + ']'.repeat(200000));\n"
        "  const head = Buffer.alloc(4); head.writeUInt32BE(body.length, 0);\n"
        "  fs.writeSync(4, Buffer.concat([head, body])); process.exit(0);\n"
        "}\n"
    )
    assert_failed_and_storable(evaluate(code, CASES[:1], language="javascript"))


def test_honest_code_next_to_the_hostile_cases_still_passes(evaluate: Evaluate) -> None:
    code = "def solution(x):\n    return {2: 4, 3: 1.5, 4: [1, 2], 5: 'five'}[x]\n"
    result = evaluate(code, CASES)
    assert result.error is None and result.score == 1.0


@pytest.mark.slow
def test_hedging_with_huge_values_lowers_the_mean_and_pass_at_k() -> None:
    """One honest answer in four, the rest hedged: the mean and pass@1 are 0.25, not 1."""
    cases = [{"input": 3, "expected_output": 9}]
    answers = ["def solution(n):\n    return n * n\n"] + ["def solution(n):\n    return 10 ** 5000\n"] * 3
    data = [{"inputs": {"test_cases": cases, "answer": a}} for a in answers]
    results = assay.evaluate(
        lambda inputs: {"text": inputs["answer"]},
        data=data,
        evaluators=[CodeCorrectnessEvaluator(execution_timeout=10)],
        summary_evaluators=[pass_at_k(1)],
        num_repetitions=2,
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    scores = [r["evaluation_results"]["results"][0] for r in results]
    assert [s.error for s in scores] == [None] * 8
    assert sum(s.score or 0 for s in scores) / len(scores) == 0.25
    summary = {r.key: r.score for r in results.summary_results.results}
    assert summary["pass@1"] == 0.25


def test_a_sandbox_killed_from_outside_is_retried_not_scored() -> None:
    """The zygote never runs job code: its death is not the candidate's doing. The job is
    run again once in a fresh sandbox, and the verdict is the honest one."""
    import os
    import signal
    import threading
    import time

    from assay.sandbox import get_pool

    config = SandboxConfig(backend="bubblewrap", workers=1)
    evaluator = CodeCorrectnessEvaluator(execution_timeout=10, sandbox=config)
    code = "import time\ndef solution(n):\n    time.sleep(0.3)\n    return n * n\n"
    pool = get_pool(config)
    evaluator.evaluate(
        Run(outputs={"text": code}), Example(inputs={"test_cases": [{"input": 1, "expected_output": 1}]})
    )
    (sandbox,) = [s for s in pool.candidates.started if not s.dead]

    def kill_soon() -> None:
        time.sleep(0.15)
        os.kill(sandbox.zygote_pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_soon)
    killer.start()
    cases = [{"input": n, "expected_output": n * n} for n in range(3)]
    result = evaluator.evaluate(Run(outputs={"text": code}), Example(inputs={"test_cases": cases}))
    killer.join()
    assert isinstance(result, EvaluationResult)
    assert sandbox.dead
    assert result.error is None and result.score == 1.0, result.comment
