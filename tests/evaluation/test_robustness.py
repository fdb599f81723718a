"""Odd but plausible input never loses stored rows or aborts a whole experiment."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import random
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from assay import Client, EvaluatorSignatureError, traceable
from assay.evaluation import DataError
from assay.store import AlreadyExistsError, StoreError
from assay.store.current import current_store


def test_user_code_seeding_random_neither_repeats_ids_nor_loses_its_stream(client: Client) -> None:
    drawn: list[float] = []

    def seeded(inputs: dict) -> dict:
        random.seed(42)
        drawn.append(random.random())
        return {"x": inputs["x"]}

    results = client.evaluate(seeded, data=[{"x": i} for i in range(30)])
    assert len({row["run"].id for row in results}) == 30
    random.seed(42)
    assert drawn == [random.random()] * 30
    assert len(client.read_experiment(results.experiment_name)) == 30


class Bot:
    @traceable
    def reply(self, text: str) -> object:
        return object()


def test_values_json_cannot_hold_are_stored_not_fatal(client: Client) -> None:
    odd = [2**70, "\ud800 lone surrogate", {1, 2}, b"bytes", object()]

    def target(inputs: dict) -> dict:
        Bot().reply("hi")
        return {"value": odd[inputs["i"]]}

    results = client.evaluate(target, data=[{"i": i} for i in range(len(odd))], experiment="odd")
    stored = client.read_experiment("odd")
    assert client.store.get_experiment(name="odd").status == "completed"
    assert len(stored) == len(results) == 5
    values = [row["run"].outputs["value"] for row in stored]
    assert values[1] == "\ud800 lone surrogate" and values[2] == {1, 2} and values[3] == b"bytes"
    assert values[4].startswith("<object object")
    [child] = list(stored)[0]["run"].child_runs
    assert child.name == "reply" and child.inputs == {"text": "hi"}  # no `self`


def test_duplicate_example_ids_are_refused_up_front(client: Client) -> None:
    client.create_dataset("d")
    client.create_example({"q": 1}, dataset_name="d", example_id="00000000-0000-4000-8000-000000000001")
    with pytest.raises(AlreadyExistsError, match="already has an example with id"):
        client.create_example({"q": 2}, dataset_name="d", example_id="00000000-0000-4000-8000-000000000001")
    with pytest.raises(AlreadyExistsError, match="appears twice"):
        client.evaluate(lambda inputs: inputs, data=[{"id": "a", "inputs": {}}, {"id": "a", "inputs": {}}])
    assert len(client.list_examples(dataset_name="d")) == 1


async def test_cancelling_keeps_every_finished_row(client: Client) -> None:
    evaluated: list[int] = []
    lock = threading.Lock()

    def slow(inputs: dict) -> dict:
        time.sleep(0.01)
        return inputs

    def seen(inputs) -> bool:
        with lock:
            evaluated.append(inputs["x"])
        return True

    task = asyncio.ensure_future(
        client.aevaluate(
            slow,
            data=[{"x": i} for i in range(400)],
            evaluators=[seen],
            experiment="cancelled",
            max_concurrency=8,
        )
    )
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    record = client.store.get_experiment(name="cancelled")
    stored = client.store.completed_keys(record.id)
    assert 0 < len(stored) < 400 and len(stored) == len(evaluated)
    assert record.status == "interrupted"  # resumable, not failed


# An opener imports the store once, says it is ready, then opens every path written to
# it: the four receive each path within microseconds of one another, so their opens race.
OPENER = """
import sys
from assay.store import open_store
print("ready", flush=True)
for line in sys.stdin:
    open_store(line.strip()).close()
    print("opened", flush=True)
"""


class Opener:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", OPENER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.paths, self.answers = self.process.stdin, self.process.stdout

    def send(self, path: str) -> None:
        self.paths.write(f"{path}\n")
        self.paths.flush()

    def close(self) -> int:
        """Its exit status, once it has read the end of its input."""
        self.paths.close()
        status = self.process.wait(60)
        self.answers.close()
        return status


def test_processes_creating_one_store_at_once_all_succeed(tmp_path: Path) -> None:
    openers = [Opener() for _ in range(4)]
    try:
        assert [opener.answers.readline() for opener in openers] == ["ready\n"] * 4
        for trial in range(5):
            path = str(tmp_path / f"race-{trial}.db")
            for opener in openers:
                opener.send(path)
            assert [opener.answers.readline() for opener in openers] == ["opened\n"] * 4
            with sqlite3.connect(path) as conn:
                assert conn.execute("SELECT COUNT(*) FROM meta").fetchone()[0] == 1
    finally:
        statuses = [opener.close() for opener in openers]
    assert statuses == [0, 0, 0, 0]


def test_memory_store_with_a_caching_evaluator() -> None:
    def cached(outputs) -> float:
        store = current_store()
        key = str(outputs["x"])
        if store.cache_get("test", key) is None:
            store.cache_put("test", key, b"1")
        return 1.0

    client = Client("sqlite://")
    data = [{"x": i % 50} for i in range(300)]
    results = client.evaluate(lambda inputs: inputs, data=data, evaluators=[cached], max_concurrency=8)
    assert results.aggregate["cached"].n == 300 and results.aggregate["cached"].errors == 0


def test_sync_target_returning_a_coroutine_is_a_clear_target_error(client: Client) -> None:
    async def agent(inputs: dict) -> dict:
        return inputs

    [row] = list(client.evaluate(lambda inputs: agent(inputs), data=[{"q": 1}]))
    assert "returned an awaitable without awaiting it" in row["run"].error


request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")


async def test_context_variables_reach_the_target_inside_a_running_loop(client: Client) -> None:
    request_id.set("abc")
    seen: list[str] = []

    def target(inputs: dict) -> dict:
        seen.append(request_id.get())
        return inputs

    client.evaluate(target, data=[{"q": 1}])  # sync facade, called from inside a loop
    assert seen == ["abc"]


async def test_overlapping_experiments_restore_the_gc_threshold(client: Client) -> None:
    before = gc.get_threshold()

    async def target(inputs: dict) -> dict:
        await asyncio.sleep(0.001)
        return inputs

    await asyncio.gather(
        *(client.aevaluate(target, data=[{"q": i, "run": n} for i in range(20)]) for n in range(3))
    )
    assert gc.get_threshold() == before


def test_numpy_scores_are_numbers(client: Client) -> None:
    def flag(outputs) -> np.bool_:
        return np.bool_(outputs["x"] > 0)

    def weight(outputs) -> dict:
        return {"score": np.float64(0.5)}

    results = client.evaluate(lambda inputs: inputs, data=[{"x": 0}, {"x": 1}], evaluators=[flag, weight])
    assert results.aggregate["flag"].mean == 0.5 and results.aggregate["weight"].mean == 0.5
    assert all(metric.errors == 0 for metric in results.aggregate.values())


def test_file_quirks(client: Client, tmp_path: Path) -> None:
    bom = tmp_path / "excel.CSV"
    bom.write_text("\ufeffquestion,outputs.answer\nhi,there\n", encoding="utf-8")
    [row] = list(client.evaluate(lambda inputs: inputs, data=str(bom)))
    assert row["example"].inputs == {"question": "hi"}
    (tmp_path / "dup.csv").write_text("a,a\n1,2\n")
    with pytest.raises(DataError, match="dup.csv:1: repeated column names \\['a'\\]"):
        client.evaluate(lambda inputs: inputs, data=tmp_path / "dup.csv")
    (tmp_path / "nan.jsonl").write_text('{"inputs": {"x": 1}}\n{"inputs": {"x": NaN}}\n')
    with pytest.raises(DataError, match="nan.jsonl:2: invalid JSON: NaN is not valid JSON"):
        client.evaluate(lambda inputs: inputs, data=tmp_path / "nan.jsonl")


def test_deleting_a_dataset_experiments_ran_on_is_refused(client: Client) -> None:
    client.create_dataset("used")
    client.create_examples(inputs=[{"q": 1}], outputs=[{"a": 4}], dataset_name="used")
    client.evaluate(lambda inputs: inputs, data="used", experiment="kept")
    with pytest.raises(StoreError, match="experiments 'kept' ran on"):
        client.delete_dataset(dataset_name="used")
    assert list(client.read_experiment("kept"))[0]["example"].outputs == {"a": 4}


def test_positional_only_names_are_refused_at_start(client: Client) -> None:
    def strict(outputs, /):
        return True

    with pytest.raises(EvaluatorSignatureError, match="cannot be positional-only"):
        client.evaluate(lambda inputs: inputs, data=[{"q": 1}], evaluators=[strict])


def test_cli_reports_store_errors_without_a_traceback(tmp_path: Path) -> None:
    db = tmp_path / "future.db"
    Client(str(db)).close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = '99'")
    done = subprocess.run(
        [sys.executable, "-m", "assay.cli", "--db", str(db), "experiments"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "newer than this assay" in done.stderr
    assert "Traceback" not in done.stderr


def test_odd_target_returns(client: Client) -> None:
    from decimal import Decimal

    def streaming(inputs: dict):
        yield from ("a", "b", "c")

    def keyed(inputs: dict) -> dict:
        return {1: "one", "big": 10**30, "price": Decimal("1.10")}

    [row] = list(client.evaluate(streaming, data=[{"q": 1}], experiment="stream"))
    assert row["run"].outputs == {"output": ["a", "b", "c"]}
    [row] = list(client.evaluate(keyed, data=[{"q": 1}], experiment="keyed"))
    assert row["run"].error is None and row["run"].outputs["1"] == "one"
    stored = list(client.read_experiment("keyed"))[0]["run"].outputs
    assert stored["price"] == "1.10" and stored["1"] == "one"


def test_big_integers_in_a_dataset(client: Client) -> None:
    data = [{"inputs": {"n": 30}, "outputs": {"factorial": 265252859812191058636308480000000}}]
    [row] = list(client.evaluate(lambda inputs: {"factorial": 265252859812191058636308480000000}, data=data))
    assert row["example"].outputs["factorial"] == row["run"].outputs["factorial"]


def test_resume_reruns_rows_whose_target_failed(client: Client) -> None:
    outage = {"on": True}

    def flaky(inputs: dict) -> dict:
        if outage["on"] and inputs["x"] == 1:
            raise TimeoutError("rate limited")
        return inputs

    data = [{"x": i} for i in range(4)]
    with pytest.raises(Exception, match="rate limited"):
        client.evaluate(flaky, data=data, experiment="r", error_handling="raise", max_concurrency=1)
    outage["on"] = False
    results = client.evaluate(flaky, data=data, experiment="r", resume=True)
    assert [row["run"].error for row in results] == [None] * 4
    assert [row["run"].error for row in client.read_experiment("r")] == [None] * 4


def test_argument_mistakes_fail_before_anything_runs(client: Client, tmp_path: Path) -> None:
    from assay.evaluation._target import TargetError

    with pytest.raises(TargetError, match="must accept at least one positional argument"):
        client.evaluate(lambda: {}, data=[{"q": 1}])
    with pytest.raises(TypeError, match="evaluators= takes a list"):
        client.evaluate(lambda inputs: inputs, data=[{"q": 1}], evaluators=lambda outputs: True)
    with pytest.raises(ValueError, match="experiment= must be a non-empty name"):
        client.evaluate(lambda inputs: inputs, data=[{"q": 1}], experiment=" ")
    (tmp_path / "data.txt").write_text("q\n1\n")
    with pytest.raises(DataError, match="data.txt: unsupported file type"):
        client.evaluate(lambda inputs: inputs, data=str(tmp_path / "data.txt"))
    utf16 = tmp_path / "utf16.csv"
    utf16.write_text("q\nhi\n", encoding="utf-16")
    with pytest.raises(DataError, match="utf16.csv:1: not UTF-8 text"):
        client.evaluate(lambda inputs: inputs, data=utf16)
    with pytest.raises(NotImplementedError, match="assay is local"):
        client.clone_public_dataset("https://smith.langchain.com/public/x/d")
    assert client.list_experiments() == []


def test_store_locations_that_cannot_work_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(StoreError, match=f"cannot open the store at {tmp_path}"):
        Client(str(tmp_path))  # a folder
    with pytest.raises(StoreError, match="must be a URL or a path, got 123"):
        Client(123)  # type: ignore[arg-type]
    with pytest.raises(StoreError) as caught:
        Client("postgresql://reader:secretpw@db.example/shop")
    assert "secretpw" not in str(caught.value) and "reader:***@" in str(caught.value)
    monkeypatch.setenv("HOME", str(tmp_path))
    Client("~/home.db").close()
    assert (tmp_path / "home.db").exists()


def test_read_only_commands_do_not_create_stores(tmp_path: Path) -> None:
    for command in (["show", "x", "--db", "typo.db"], ["--db", "typo.db", "experiments"]):
        done = subprocess.run(
            [sys.executable, "-m", "assay.cli", *command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and "no store at typo.db" in done.stderr
    assert not (tmp_path / "typo.db").exists()


def test_mastra_single_object_run() -> None:
    from assay.scorers import create_completeness_scorer

    scorer = create_completeness_scorer()
    result = scorer.run(
        {
            "input": "Explain photosynthesis inputs",
            "output": [{"role": "assistant", "content": "Photosynthesis inputs: light and water"}],
        }
    )
    assert result.score == 1.0


def test_sys_exit_in_a_target_is_a_target_error(client: Client) -> None:
    def quits(inputs: dict) -> dict:
        sys.exit(3)

    [row] = list(client.evaluate(quits, data=[{"q": 1}]))
    assert row["run"].error == "SystemExit: 3"


def test_experiment_names_that_break_addresses_are_refused(client: Client) -> None:
    from assay.evaluation import ExperimentError

    with pytest.raises(ExperimentError, match="may not hold '/'"):
        client.evaluate(lambda inputs: inputs, data=[{"q": 1}], experiment="team/run-1")
    assert client.list_datasets() == []
