"""Test programs that cannot be fooled: an async check is awaited; a candidate's
StopIteration (and friends) fails the test instead of ending its iteration."""

from __future__ import annotations

import pytest

from assay.sandbox import SandboxPool, get_language

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
PY = get_language("python")
JS = get_language("javascript")

ASYNC_PY = "async def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(3) == 9\n"
ASYNC_PY_AWAITING = (
    "class Tick:\n"
    "    def __await__(self):\n"
    "        yield\n"
    "async def check(candidate):\n"
    "    await Tick()\n"
    "    assert candidate(3) == 9\n"
)
ITERATING = (
    "def check(candidate):\n"
    "    assert all(map(lambda x: candidate(x) == x * x, [2, 3, 4]))\n"
    "    assert list(map(candidate, [2, 3])) == [4, 9]\n"
)
ASYNC_JS = (
    "const assert = require('assert');\n"
    "async function check(candidate) {\n"
    "  assert.strictEqual(candidate(2), 4);\n"
    "  assert.strictEqual(candidate(3), 9);\n"
    "}\n"
)
PROMISE_JS = (
    "const assert = require('assert');\n"
    "function check(candidate) {\n"
    "  return Promise.resolve().then(() => assert.strictEqual(candidate(3), 9));\n"
    "}\n"
)
SQUARE_PY = "def f(x):\n    return x * x\n"
WRONG_PY = "def f(x):\n    return 0\n"
SQUARE_JS = "function f(x) { return x * x; }"
WRONG_JS = "function f(x) { return 0; }"


@pytest.mark.parametrize("test", [ASYNC_PY, ASYNC_PY_AWAITING], ids=["async", "awaiting"])
def test_an_async_python_check_is_awaited(pool: SandboxPool, test: str) -> None:
    wrong = pool.run_test_program(PY, WRONG_PY, test, "f", timeout=10)
    assert not wrong.passed and wrong.verdict["kind"] == "assertion"
    assert pool.run_test_program(PY, SQUARE_PY, test, "f", timeout=10).passed


@pytest.mark.parametrize("test", [ASYNC_JS, PROMISE_JS], ids=["async", "promise"])
def test_an_async_javascript_check_is_awaited(pool: SandboxPool, test: str) -> None:
    wrong = pool.run_test_program(JS, WRONG_JS, test, "f", timeout=10)
    assert not wrong.passed, wrong.verdict
    assert pool.run_test_program(JS, SQUARE_JS, test, "f", timeout=10).passed


@pytest.mark.parametrize("raised", ["StopIteration", "StopAsyncIteration", "GeneratorExit"])
def test_a_candidate_cannot_end_the_tests_iteration(pool: SandboxPool, raised: str) -> None:
    code = f"def f(x):\n    if x == 2:\n        return 4\n    raise {raised}('done')\n"
    run = pool.run_test_program(PY, code, ITERATING, "f", timeout=10)
    assert not run.passed
    assert raised in (run.verdict.get("message") or "")
    assert pool.run_test_program(PY, SQUARE_PY, ITERATING, "f", timeout=10).passed
