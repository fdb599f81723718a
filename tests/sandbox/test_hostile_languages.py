"""Hostile candidates in Go, Java, C++ and TypeScript on every backend: the same attacks
as the Python and JavaScript tests, each written once per language (``_hostile_snippets``).

The expected value is an unguessable marker that exists only in this process."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from assay.sandbox import Call, FunctionRun, Limits, SandboxPool, get_language, values_equal
from assay.sandbox import _toolchains as toolchains
from assay.sandbox._launch import HARNESS_PARENT, SANDBOX_HARNESS_ROOT

from . import _hostile_snippets as snippets
from ._languages import COMPILED

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py
SECRET = fixtures.SECRET
assert_left_clean = fixtures.assert_left_clean

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

MARKER = "EXPECTED-" + os.urandom(8).hex()
CASES = [Call(("probe",)), Call(("honest",))]
EXPECTED = [MARKER, "honest"]
SLOW = pytest.mark.slow
# the quick run covers bubblewrap; the other backends (and the heavy attacks) are slow
BACKENDS = ["bubblewrap", pytest.param("unshare", marks=SLOW), pytest.param("rlimit", marks=SLOW)]


@pytest.fixture(params=BACKENDS)
def any_pool(request: pytest.FixtureRequest, make_pool: Any) -> Iterator[SandboxPool]:
    chosen: SandboxPool = make_pool(request.param)
    yield chosen
    assert_left_clean(chosen)


@pytest.fixture(params=COMPILED)
def language(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def attack(
    pool: SandboxPool, language: str, body: str, timeout: float = 10, limits: Limits | None = None
) -> FunctionRun:
    code = snippets.program(language, body)
    return pool.run_function(
        get_language(language), code, snippets.ENTRY[language], CASES, timeout, limits or Limits()
    )


def passed(run: FunctionRun) -> list[bool]:
    return [o.ok and values_equal(e, o.value) for e, o in zip(EXPECTED, run.outcomes)]


def test_the_expected_values_secrets_and_host_stay_out_of_reach(
    any_pool: SandboxPool, language: str, loopback: Any, canary: Any
) -> None:
    isolating = any_pool.backend.name != "rlimit"
    cache = toolchains.cache_root()
    harness = SANDBOX_HARNESS_ROOT if isolating else HARNESS_PARENT
    toolchains.prepare(language if language != "typescript" else "cpp")  # the cache is not empty
    prebuilt = toolchains.SANDBOX_PREBUILT if isolating else cache  # where the sandbox sees it
    writes = [
        f"{prebuilt}/pwned",
        f"{prebuilt}/{os.listdir(cache)[0]}/pwned",
        f"{harness}/harness/pwned",
        "/usr/pwned",
    ]
    # the rlimit backend does not hide the host's files or network (it says so)
    reads = ["/etc/passwd", canary.path, "/work/main/pyproject.toml"] if isolating else []
    if isolating:
        writes.append(canary.path)
    body = snippets.snoop(language, writes, reads, loopback.port if isolating else 0)
    run = attack(any_pool, language, body)
    outcome = run.outcomes[0]
    assert outcome.ok, (outcome.error_type, outcome.message, run.output, run.load_failure)
    seen = str(outcome.value)
    assert MARKER not in seen and SECRET not in seen
    assert "wrote" not in seen and "read /" not in seen and "connected" not in seen, seen[-500:]
    assert not any("pwned" in files for _, _, files in os.walk(cache))
    assert loopback.connections == []
    assert canary.intact()
    assert passed(run) == [False, True]


def test_forged_frames_and_printed_verdicts_cannot_pass(any_pool: SandboxPool, language: str) -> None:
    run = attack(any_pool, language, snippets.FORGE[language])
    assert passed(run) == [False, True]
    assert run.outcomes[0].status in ("crashed", "error")


@SLOW
def test_a_process_bomb_is_stopped(any_pool: SandboxPool, language: str) -> None:
    run = attack(any_pool, language, snippets.PROCESS_BOMB[language], limits=Limits(max_processes=48))
    first = run.outcomes[0]
    assert passed(run)[0] is False
    assert not (first.ok and first.value == "spawned 500"), first


@SLOW
def test_a_memory_bomb_is_stopped(any_pool: SandboxPool, language: str) -> None:
    run = attack(any_pool, language, snippets.MEMORY_BOMB[language], limits=Limits(memory_bytes=384 << 20))
    assert run.outcomes[0].status in ("crashed", "error"), run.outcomes[0]
    assert passed(run) == [False, True]


@SLOW
def test_an_infinite_loop_times_out_after_the_compile_step(any_pool: SandboxPool, language: str) -> None:
    # a second, which the loop spends spinning: a timeout is a timeout however long
    run = attack(any_pool, language, snippets.INFINITE_LOOP[language], timeout=1)
    assert run.timed_out
    assert run.outcomes[0].status == "timeout"
    assert run.compile_ms is not None
    # the deadline moved by the compile time only: the run itself had its second
    assert run.duration_ms < run.compile_ms + 1000 + 5000
