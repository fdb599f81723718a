"""``regex_match`` over the service: the pattern is the caller's, so a backtracking engine
would spend the server's CPU on it (a second per request, GIL held); the service matches
with RE2, linear in the text whatever the pattern."""

from __future__ import annotations

import resource
from collections.abc import Iterator

import pytest
from service_testing import LiveService

from assay.schemas import Example, Run
from assay.service import RemoteEvaluator
from assay.service.builtins import builtin_evaluators

# (a+)+$ is the classic; the regex module fails it fast, but not (a|aa)+$
CATASTROPHIC = [("(a+)+$", "a" * 30 + "b"), ("(a|aa)+$", "a" * 40 + "b")]


@pytest.fixture(scope="module")
def service() -> Iterator[LiveService]:
    with LiveService(builtin_evaluators(["regex_match"])) as live:  # as --builtin serves it
        yield live


def _process_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # the service is a thread of this process
    return usage.ru_utime + usage.ru_stime


@pytest.mark.parametrize(("pattern", "text"), CATASTROPHIC)
def test_a_catastrophic_pattern_is_answered_in_linear_time(
    service: LiveService, pattern: str, text: str
) -> None:
    remote = RemoteEvaluator(service.url, "regex_match", timeout=60, retries=0)
    before = _process_cpu_seconds()
    answer = remote.evaluate(Run(outputs={"output": text}), Example(outputs={"pattern": pattern}))
    spent = _process_cpu_seconds() - before
    assert answer.score == 0.0 and answer.error is None, answer  # type: ignore[union-attr]
    assert answer.metadata["engine"] == "re2"  # type: ignore[union-attr]
    # kernel CPU of the whole process (client and server): a backtracker spends its 1 s timeout
    assert spent < 0.5, f"the service spent {spent:.2f} s of CPU on one pattern"
    matching = remote.evaluate(Run(outputs={"output": text[:-1]}), Example(outputs={"pattern": pattern}))
    assert matching.score == 1.0, matching  # type: ignore[union-attr]


def test_a_pattern_only_a_backtracker_runs_is_an_error_naming_the_engine(service: LiveService) -> None:
    remote = RemoteEvaluator(service.url, "regex_match", timeout=60, retries=0)
    answer = remote.evaluate(Run(outputs={"output": "abab"}), Example(outputs={"pattern": r"(ab)\1"}))
    assert answer.score is None and "RE2" in (answer.error or ""), answer  # type: ignore[union-attr]
