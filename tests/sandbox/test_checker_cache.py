"""The resident checker compiles each test program once: a cached program must behave
exactly as one compiled afresh (a fresh namespace each run, its own prompt's helpers,
a compile error reported every time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from assay.sandbox import SandboxPool

RIGHT = "def f(x):\n    return x + 1\n"
WRONG = "def f(x):\n    return x\n"
# module-level state: a cached program that reused its namespace would see the last run's
STATEFUL = "seen = []\n\ndef check(candidate):\n    assert not seen\n    seen.append(1)\n    assert candidate(1) == 2\n"


@pytest.fixture(params=["bubblewrap", "unshare"])
def pool(request: pytest.FixtureRequest, make_pool: Callable[..., SandboxPool]) -> SandboxPool:
    chosen = make_pool(request.param)
    assert chosen.config.reuse_checker
    return chosen


def run(pool: SandboxPool, python: Any, program: str, test: str, prompt: str = "") -> Any:
    return pool.run_test_program(python, program, test, "f", 10, prompt=prompt)


def test_each_run_of_a_cached_program_starts_from_a_fresh_namespace(pool: SandboxPool, python: Any) -> None:
    verdicts = [run(pool, python, program, STATEFUL).passed for program in (RIGHT, WRONG, RIGHT, RIGHT)]
    assert verdicts == [True, False, True, True]


def test_the_same_test_with_another_prompt_uses_that_prompts_helpers(pool: SandboxPool, python: Any) -> None:
    test = "def check(candidate):\n    assert candidate(1) == helper()\n"
    two = "def helper():\n    return 2\n\ndef f(x):\n    pass\n"
    three = "def helper():\n    return 3\n\ndef f(x):\n    pass\n"
    assert run(pool, python, RIGHT, test, prompt=two).passed
    assert not run(pool, python, RIGHT, test, prompt=three).passed
    assert run(pool, python, RIGHT, test, prompt=two).passed


def test_a_test_program_that_does_not_compile_fails_every_time(pool: SandboxPool, python: Any) -> None:
    for _ in range(3):
        result = run(pool, python, RIGHT, "def check(candidate):\n    assert candidate(1) ==\n")
        assert not result.passed
        assert result.verdict["error_type"] == "SyntaxError", result.verdict
