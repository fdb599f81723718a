"""The trusted parent cannot be stalled or flooded: decoding is linear (no hash-flooding
sets or dicts), and each test case's value is reduced to a small record as it arrives."""

from __future__ import annotations

import sys
import time
import tracemalloc
from typing import Any

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import CodeCorrectnessEvaluator
from assay.sandbox import SandboxConfig, get_language
from assay.schemas import Example, Run

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py
BACKENDS = fixtures.BACKENDS


pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

# integers that differ by multiples of 2**61 - 1 share one hash: a set of them is quadratic
FLOOD = (
    "import json, os, struct\n"
    "def solution(x):\n"
    "    items = [{'$int': format((2**61 - 1) * k + 1, 'x')} for k in range(60000)]\n"
    "    value = {KIND}\n"
    "    body = json.dumps({'ok': True, 'value': value}).encode()\n"
    "    os.write(4, struct.pack('>I', len(body)) + body)\n"
    "    os._exit(0)\n"
)
KINDS = {
    "set": "{'$set': items}",
    "frozenset": "{'$frozenset': items}",
    "dict": "{'$dict': [[item, 0] for item in items]}",
}


def evaluate(
    backend: str, code: str, cases: list[dict[str, Any]], timeout: float = 5, **inputs: Any
) -> EvaluationResult:
    evaluator = CodeCorrectnessEvaluator(
        execution_timeout=timeout, sandbox=SandboxConfig(backend=backend, workers=1)
    )
    result = evaluator.evaluate(Run(outputs={"text": code}), Example(inputs={"test_cases": cases, **inputs}))
    assert isinstance(result, EvaluationResult)
    return result


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hash_flooding_value_fails_fast(backend: str, kind: str) -> None:
    # the parent's CPU time, which a quadratic decoder would spend (60,000 colliding
    # keys: minutes); its wall time is the machine's load too (5.1-5.4 s at load ~80)
    started = time.process_time()
    result = evaluate(backend, FLOOD.replace("{KIND}", KINDS[kind]), [{"input": 1, "expected_output": [1]}])
    assert time.process_time() - started < 5
    assert result.error is None and result.score == 0.0
    assert "hash" in (result.metadata["test_cases_details"][0]["error_message"] or "")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hash_flooding_value_fails_a_test_program_fast(backend: str) -> None:
    code = "def solution(x):\n    return {(2**61 - 1) * k + 1 for k in range(3000)}\n"  # cheap at 3,000
    started = time.monotonic()
    evaluator = CodeCorrectnessEvaluator(
        execution_timeout=5, sandbox=SandboxConfig(backend=backend, workers=1)
    )
    inputs = {
        "test": "def check(candidate):\n    assert len(candidate(1)) == 3000\n",
        "entry_point": "solution",
        "prompt": "",
    }
    result = evaluator.evaluate(Run(outputs={"text": code}), Example(inputs=inputs))
    assert isinstance(result, EvaluationResult)
    assert time.monotonic() - started < 5
    assert result.error is None and result.score == 0.0
    assert "hash" in (result.comment or "")


def test_honest_sets_and_dicts_of_numbers_still_pass() -> None:
    code = "def solution(n):\n    return {'s': set(range(n)), 'd': {k: -k for k in range(-n, n)}}\n"
    n = 50_000
    result = evaluate(
        "bubblewrap",
        code,
        [{"input": n, "expected_output": {"s": set(range(n)), "d": {k: -k for k in range(-n, n)}}}],
    )
    assert result.score == 1.0, result.comment


def test_many_large_replies_are_not_kept_decoded() -> None:
    """Twelve replies of 125,000 items each: kept decoded, a 1 MB list each, ~12 MB at
    once; reduced as they arrive, the parent's peak was 3.1 MiB (6.2 MiB at twice the
    items, 12.5 MiB at four times: the bound moves with them, at a quarter of the
    decoding the test once did under tracemalloc)."""
    code = "def solution(x):\n    return [x] * 125_000\n"
    cases = [{"input": index, "expected_output": [index]} for index in range(12)]
    pool_warm = evaluate("bubblewrap", code, cases[:1])
    assert pool_warm.score == 0.0
    tracemalloc.start()
    try:
        # tracing every allocation makes the parent's reading of a reply ~10x slower:
        # 20 s a case at load 15 (at twice these items), over a 120 s budget by the 7th
        # case (10 of 10 runs)
        result = evaluate("bubblewrap", code, cases, timeout=600)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.score == 0.0 and result.error is None
    assert peak < 6 * 2**20, f"peak {peak / 2**20:.1f} MiB"
    details = result.metadata["test_cases_details"]
    assert all(isinstance(d["actual_output"], str) and "truncated" in d["actual_output"] for d in details), [
        (d["status"], str(d["actual_output"])[:60], d["error_message"]) for d in details
    ]


def test_the_decoder_refuses_flooding_but_not_ordinary_collisions() -> None:
    from assay.sandbox.harness import codec

    assert codec.decode({"$set": [-1, -2, 1, 2]}) == {-1, -2, 1, 2}  # hash(-1) == hash(-2)
    flood = {"$set": [{"$int": format((2**61 - 1) * k + 7, "x")} for k in range(100)]}
    with pytest.raises(codec.ValueOverLimit, match="share one hash"):
        codec.decode(flood)
    assert get_language("python") is not None
