"""`assay compare` checks a judge metric it finds different for length bias: a judge that
rewards length is flagged (the winner writes longer and its gains go with length); a judge
that rewards content is not; a metric that is no judge's gets no check."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import assay
from assay.comparison import compare
from assay.evaluators import CriteriaEvaluator
from assay.testing import FakeOpenAIServer
from assay.testing.replies import RecordedRequest

N = 40
DATA = [{"inputs": {"i": i}} for i in range(N)]


def submission(request: RecordedRequest) -> str:
    return request.text.split("[Submission]:", 1)[1].split("***", 1)[0].strip()


def judge_of(rule: Callable[[str], bool]) -> Callable[[RecordedRequest], dict[str, str]]:
    return lambda request: {"reasoning": "r", "value": "Y" if rule(submission(request)) else "N"}


def run(client: assay.Client, server: FakeOpenAIServer, name: str, answer: Callable[[int], str]) -> None:
    assay.evaluate(
        lambda inputs: {"output": answer(inputs["i"])},
        data=DATA,
        evaluators=[
            CriteriaEvaluator("helpfulness", model=server.chat_model()),
            lambda outputs: {"key": "chars", "score": len(outputs["output"])},  # not a judge
        ],
        experiment=name,
        client=client,
    )


@pytest.fixture
def client(tmp_path: Path) -> Iterator[assay.Client]:
    client = assay.Client(str(tmp_path / "assay.db"))
    yield client
    client.close()


def test_a_judge_that_rewards_length_is_flagged(client: assay.Client, tmp_path: Path) -> None:
    padding = random.Random(7)
    extra = [padding.randrange(0, 120) for _ in range(N)]
    with FakeOpenAIServer(handler=judge_of(lambda text: len(text) > 60)) as server:
        run(client, server, "short", lambda i: "Paris.")
        run(client, server, "long", lambda i: "Paris. " + "Indeed, " * (extra[i] // 8))
    comparison = compare("short", "long", client=client)
    assert comparison["helpfulness"].verdict == "better"
    (check,) = comparison.verbosity  # the judge metric only: "chars" is no judge's
    assert check.key == "helpfulness" and check.n == N and check.flagged
    assert check.mean_length_b > check.mean_length_a
    assert check.rho is not None and check.rho > 0.5 and check.ci95 is not None and check.ci95[0] > 0
    assert any("verbosity check on judge metric 'helpfulness'" in w for w in comparison.warnings)
    shown = subprocess.run(
        [sys.executable, "-m", "assay.cli", "--db", str(tmp_path / "assay.db"), "compare", "short", "long"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    flat = " ".join(shown.stdout.split())
    assert "verbosity check on judge metric 'helpfulness'" in flat and "the judge may favour length" in flat
    as_json = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay.cli",
            "--db",
            str(tmp_path / "assay.db"),
            "compare",
            "short",
            "long",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    (reported,) = json.loads(as_json.stdout)["verbosity"]
    assert reported["flagged"] is True and reported["n"] == N


def test_a_judge_that_rewards_content_is_not_flagged(client: assay.Client) -> None:
    lengths = random.Random(11)
    extra = [lengths.randrange(0, 120) for _ in range(2 * N)]

    def answer(prefix: str, offset: int) -> Callable[[int], str]:
        return lambda i: prefix + "." * extra[offset + i]

    with FakeOpenAIServer(handler=judge_of(lambda text: text.startswith("Paris"))) as server:
        run(client, server, "wrong", answer("Lyon", 0))
        right = answer("Paris", N)
        # right on 3 of 4 examples (the gains vary: 0 or 1), at lengths unrelated to it
        run(client, server, "right", lambda i: right(i) if i % 4 else "Lyon" + "." * extra[N + i])
    comparison = compare("wrong", "right", client=client)
    assert comparison["helpfulness"].verdict == "better"
    (check,) = comparison.verbosity
    assert not check.flagged and check.ci95 is not None and check.ci95[0] <= 0 <= check.ci95[1]
    assert not any("verbosity" in w for w in comparison.warnings)


def test_no_check_without_a_difference(client: assay.Client) -> None:
    with FakeOpenAIServer(handler=judge_of(lambda text: True)) as server:
        run(client, server, "one", lambda i: "Paris.")
        run(client, server, "two", lambda i: "Paris, in France.")
    comparison = compare("one", "two", client=client)
    assert comparison["helpfulness"].verdict == "no detectable difference"
    assert comparison.verbosity == [] and comparison.as_dict()["verbosity"] == []
