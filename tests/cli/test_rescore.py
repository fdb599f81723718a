"""Re-scoring stored outputs: the target is not called, results join the experiment."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli.conftest import run_assay

from assay import Client, evaluate, evaluate_existing
from assay.evaluation import ExperimentError, ExperimentInterrupted

DATA = [{"inputs": {"q": f"q{i}"}, "outputs": {"answer": f"Q{i}" if i % 4 else "no"}} for i in range(600)]


def target(inputs: dict) -> dict:
    return {"answer": inputs["q"].upper()}


def correct(outputs: dict, reference_outputs: dict) -> bool:
    return outputs["answer"] == reference_outputs["answer"]


@pytest.fixture
def client(tmp_path: Path) -> Client:
    client = Client(str(tmp_path / "assay.db"))
    evaluate(target, data=DATA, evaluators=[correct], experiment="base", client=client, progress=False)
    return client


def test_new_evaluators_score_stored_outputs_without_the_target(client: Client) -> None:
    seen: list[str] = []

    def length(outputs: dict, inputs: dict) -> int:
        seen.append(inputs["q"])
        return len(outputs["answer"])

    def mean_length(outputs: list) -> float:
        return sum(len(o["answer"]) for o in outputs) / len(outputs)

    results = evaluate_existing(
        "base",
        evaluators=[length],
        summary_evaluators=[mean_length],
        client=client,
        progress=False,
    )
    assert len(seen) == 600 and set(results.aggregate) == {"correct", "length"}
    assert results.aggregate["correct"].mean == 0.75  # the run's results are kept
    stored = client.read_experiment("base")
    assert stored.aggregate["length"].n == 600
    assert [r.key for r in stored.summary_results.results] == ["mean_length"]
    assert stored.experiment.config["rescored"] == ["length"]


def test_langsmiths_evaluate_with_an_experiment_name(client: Client) -> None:
    def shouting(outputs: dict) -> bool:
        return outputs["answer"].isupper()

    results = evaluate("base", evaluators=[shouting], client=client, progress=False)
    assert results.experiment_name == "base" and results.aggregate["shouting"].mean == 1.0


def test_an_evaluator_already_present_is_replaced_only_when_asked(client: Client) -> None:
    def correct(outputs: dict, reference_outputs: dict) -> float:  # the same name, a new rule
        return float(outputs["answer"].lower() == reference_outputs["answer"].lower())

    with pytest.raises(ExperimentError, match="already has results from 'correct'; pass replace=True"):
        evaluate_existing("base", evaluators=[correct], client=client, progress=False)
    assert client.read_experiment("base").aggregate["correct"].mean == 0.75
    evaluate_existing("base", evaluators=[correct], client=client, replace=True, progress=False)
    stored = client.read_experiment("base")
    assert stored.aggregate["correct"].n == 600 and stored.aggregate["correct"].mean == 0.75
    assert all(len(row.results) == 1 for row in stored.rows)  # replaced, not added
    with pytest.raises(ExperimentError, match="already has results"):  # now a re-scored evaluator
        evaluate_existing("base", evaluators=[correct], client=client, progress=False)


def test_an_evaluator_returning_a_stored_key_under_another_name_is_refused(client: Client) -> None:
    def sneaky(outputs: dict) -> dict:
        return {"key": "correct", "score": 0}

    with pytest.raises(ExperimentError, match="already holds results with key 'correct'"):
        evaluate_existing("base", evaluators=[sneaky], client=client, progress=False)
    assert client.read_experiment("base").aggregate["correct"].mean == 0.75


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Ctrl-C handled as a terminal's foreground command has it (this suite may run as a
    background job of a script, which starts with SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c")
def test_an_interrupted_rescore_resumes_where_it_stopped(client: Client) -> None:
    """A real SIGINT (Ctrl-C) in the middle of the second chunk of rows."""
    calls: list[str] = []
    interrupting = [True]

    def length(outputs: dict, inputs: dict) -> int:
        calls.append(inputs["q"])
        if interrupting[0] and len(calls) >= 300:
            if len(calls) == 300:
                os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)  # the interrupt arrives before this chunk can finish
        return len(outputs["answer"])

    with pytest.raises(ExperimentInterrupted) as caught:
        evaluate_existing("base", evaluators=[length], client=client, max_concurrency=1, progress=False)
    assert caught.value.stored == 256 and caught.value.planned == 600  # the first chunk was written
    assert "interrupted: 256 of 600 rows stored in base" in str(caught.value)
    assert client.read_experiment("base").aggregate["length"].n == 256
    calls.clear()
    interrupting[0] = False
    evaluate_existing("base", evaluators=[length], client=client, max_concurrency=1, progress=False)
    assert len(calls) == 600 - 256  # only the rows without the evaluator's results
    stored = client.read_experiment("base")
    assert stored.aggregate["length"].n == 600 and stored.experiment.config["rescoring"] == {}


def test_unknown_experiment_and_nothing_to_do(client: Client) -> None:
    from assay.store import NotFoundError

    with pytest.raises(NotFoundError, match="no experiment 'nope'"):
        evaluate_existing("nope", evaluators=[correct], client=client)
    with pytest.raises(ValueError, match="needs evaluators= or summary_evaluators="):
        evaluate_existing("base", client=client)


def test_assay_rescore_on_the_command_line(project: Path) -> None:
    assert (
        run_assay(
            "run", "app:answer", "--data", "data.jsonl", "-e", "app:correct", "--experiment", "r", cwd=project
        ).returncode
        == 0
    )
    done = run_assay(
        "rescore", "r", "-e", "app:length", "-e", "exact_match", "--fail-under", "length=2", cwd=project
    )
    assert done.returncode == 0, done.stderr
    assert any(line.split()[:3] == ["length", "higher", "2.000"] for line in done.stdout.splitlines()), (
        done.stdout
    )
    clash = run_assay("rescore", "r", "-e", "app:correct", cwd=project)
    assert clash.returncode == 2 and "--replace" in clash.stderr
    replaced = run_assay("rescore", "r", "-e", "app:correct", "--replace", "--json", cwd=project)
    assert replaced.returncode == 0 and '"correct"' in replaced.stdout
    missing = run_assay("rescore", "rr", "-e", "app:correct", cwd=project)
    assert missing.returncode == 2 and "no experiment 'rr'" in missing.stderr
