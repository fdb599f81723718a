"""``resume=True, retry_errors=True`` (``assay run --resume --retry-errors``): failed targets
and errored evaluators run again, every result that scored is kept and not recomputed, the
report says how many were retried, and the stored figures agree with the rows."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.cli.conftest import run_assay

from assay import Client, evaluate
from assay.evaluation.audit import figure_mismatches

ROWS = 24


class Outage:
    """What a flaky world does: while ``down``, the target fails on every 4th row and the
    judge on every 3rd; every call is counted."""

    def __init__(self) -> None:
        self.down = True
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()

    def count(self, what: str, i: int) -> None:
        with self.lock:
            self.calls[f"{what}:{i}"] += 1

    def target(self, inputs: dict[str, Any]) -> dict[str, Any]:
        self.count("target", inputs["i"])
        if self.down and inputs["i"] % 4 == 1:
            raise RuntimeError("rate limited")
        return {"i": inputs["i"]}

    def judge(self, outputs: dict[str, Any]) -> float:
        self.count("judge", outputs["i"])
        if self.down and outputs["i"] % 3 == 0:
            raise RuntimeError("the judge service is down")
        return 1.0

    def length(self, outputs: dict[str, Any]) -> int:
        self.count("length", outputs["i"])
        return 1


def run(client: Client, world: Outage, **options: Any) -> Any:
    def judge(outputs: dict[str, Any]) -> float:
        return world.judge(outputs)

    def length(outputs: dict[str, Any]) -> int:
        return world.length(outputs)

    data = [{"inputs": {"i": i}} for i in range(ROWS)]
    return evaluate(
        world.target, data=data, evaluators=[judge, length], experiment="flaky", client=client, **options
    )


def errors_of(results: Any) -> Counter[str]:
    found: Counter[str] = Counter()
    for row in results:
        if row["run"].error:
            found["target"] += 1
        found.update(r.key for r in row["evaluation_results"]["results"] if r.error)
    return found


def test_retry_errors_runs_again_what_failed_and_keeps_what_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client, world = Client(str(tmp_path / "db.sqlite")), Outage()
    first = run(client, world, progress=False)
    failed_targets = {i for i in range(ROWS) if i % 4 == 1}
    failed_judge = {i for i in range(ROWS) if i % 3 == 0} - failed_targets
    assert errors_of(first) == {"target": len(failed_targets), "judge": len(failed_judge)}
    kept = {
        row["run"].id: [r.model_dump() for r in row["evaluation_results"]["results"]]
        for row in first
        if not row["run"].error
    }
    world.down, world.calls = False, Counter()
    capsys.readouterr()
    second = run(client, world, resume=True, retry_errors=True, progress=None)
    assert errors_of(second) == {}
    # the target ran again only where it had failed; the judge only where it (or the target) had
    assert {k for k in world.calls if k.startswith("target:")} == {f"target:{i}" for i in failed_targets}
    assert {k for k in world.calls if k.startswith("judge:")} == {
        f"judge:{i}" for i in failed_targets | failed_judge
    }
    assert {k for k in world.calls if k.startswith("length:")} == {f"length:{i}" for i in failed_targets}
    for row in second:  # results that scored are the very ones stored before
        if row["run"].id in kept:
            before = {r["key"]: r for r in kept[row["run"].id] if r["error"] is None}
            after = {r.key: r.model_dump() for r in row["evaluation_results"]["results"]}
            assert all(after[key] == result for key, result in before.items())
    message = capsys.readouterr().err
    assert (
        f"retried {len(failed_targets)} failed target(s) and {len(failed_judge)} evaluator error(s)"
        in message
    )
    assert f"{len(failed_judge)} now scored, 0 still errors" in message
    record = client.store.get_experiment(name="flaky")
    assert record is not None and record.status == "completed"
    assert figure_mismatches(client.store, record) == []
    [judge] = [m for m in second.stats.metrics if m.key == "judge"]
    assert (judge.n, judge.errors) == (ROWS, 0)


def test_a_plain_resume_keeps_evaluator_errors(tmp_path: Path) -> None:
    client, world = Client(str(tmp_path / "db.sqlite")), Outage()
    run(client, world, progress=False)
    world.down = False
    again = run(client, world, resume=True, progress=False)
    assert errors_of(again) == {"judge": len({i for i in range(ROWS) if i % 3 == 0 and i % 4 != 1})}
    record = client.store.get_experiment(name="flaky")
    assert record is not None and figure_mismatches(client.store, record) == []


def test_retry_errors_needs_resume(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="retry_errors=True goes with resume=True"):
        evaluate(lambda inputs: inputs, data=[{"inputs": {}}], experiment="x", retry_errors=True)
    done = run_assay("run", "app:work", "--data", "d.jsonl", "--retry-errors", cwd=tmp_path)
    assert done.returncode == 2 and "--retry-errors goes with --resume" in done.stderr, done.stderr
