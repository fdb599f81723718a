"""Choosing an executor (argument, environment), the Ray extra's absence, batch sizing and
which code travels by value: no cluster needed."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from assay import Client, evaluate
from assay.evaluation._rows import RowPipeline
from assay.evaluation._target import Target
from assay.evaluation.executor import executor_from_env
from assay.executors import ExecutorError, LocalExecutor, RayExecutor
from assay.executors.ray._batches import BatchSizing

workload = sys.modules["assay_tests_executors_workload"]  # loaded by conftest.py


def data() -> list[dict[str, Any]]:
    return [{"inputs": {"x": 1}, "outputs": {"answer": 2}}]


def test_unknown_executor_in_the_environment_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_EXECUTOR", "spark")
    with pytest.raises(ExecutorError, match=r"ASSAY_EXECUTOR='spark' is not an executor: use 'local'.*'ray'"):
        evaluate(workload.doubling, data=data(), client=Client("sqlite://"), progress=False)


def test_local_executor_overrides_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_EXECUTOR", "ray")
    monkeypatch.setenv("ASSAY_RAY_ADDRESS", "127.0.0.1:1")  # nothing there: never contacted
    results = evaluate(
        workload.doubling, data=data(), client=Client("sqlite://"), progress=False, executor=LocalExecutor()
    )
    assert [row["run"].outputs for row in results] == [{"answer": 2}]


def test_environment_names_ray_and_its_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_EXECUTOR", " Ray ")
    monkeypatch.delenv("ASSAY_RAY_ADDRESS", raising=False)
    chosen = executor_from_env()
    assert isinstance(chosen, RayExecutor) and chosen.address == "auto"
    monkeypatch.setenv("ASSAY_EXECUTOR", "local")
    assert executor_from_env() is None


def test_not_an_executor_is_refused_before_any_row_runs() -> None:
    client = Client("sqlite://")
    with pytest.raises(ExecutorError, match=r"executor= takes an executor such as RayExecutor"):
        evaluate(workload.doubling, data=data(), client=client, progress=False, executor="ray")
    assert client.store.list_experiments() == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"address": ""}, "address="),
        ({"workers": 0}, "workers=...) must be a positive integer"),
        ({"threads_per_worker": -1}, "threads_per_worker=...) must be a positive integer"),
        ({"max_attempts": 0}, "max_attempts=...) must be at least 1"),
        ({"batch_seconds": 0}, "batch_seconds=...) must be positive"),
        ({"max_batch_rows": 0}, "max_batch_rows=...) must be a positive integer"),
    ],
)
def test_bad_ray_options_are_named(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ExecutorError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RayExecutor(**options)


def test_without_ray_installed_the_error_names_the_extra(tmp_path: Any) -> None:
    script = (
        "import sys; sys.modules['ray'] = None\n"
        "from assay import Client, evaluate\n"
        "from assay.executors import RayExecutor\n"
        "from assay.errors import MissingExtraError\n"
        "try:\n"
        "    evaluate(lambda inputs: inputs, data=[{'inputs': {'x': 1}}], client=Client('sqlite://'),\n"
        "             progress=False, executor=RayExecutor())\n"
        "except MissingExtraError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "the Ray executor needs ray, which is not installed: pip install 'assay[ray]'" in done.stdout, (
        done.stderr
    )


def test_batches_grow_to_the_work_wanted_and_shrink_for_the_tail() -> None:
    sizing = BatchSizing(batch_seconds=0.25, first=16, max_rows=4096)
    assert sizing.size(remaining=10_000, slots=4) == 16  # nothing measured yet
    sizing.observe(rows=16, seconds=16 * 0.001)  # 1 ms a row: 250 rows hold 0.25 s
    assert sizing.size(remaining=10_000, slots=4) == 250
    assert sizing.size(remaining=100, slots=4) == 25  # the last rows spread over every slot
    assert sizing.size(remaining=1, slots=4) == 1
    trivial = BatchSizing(batch_seconds=0.25, first=16, max_rows=4096)
    trivial.observe(rows=1000, seconds=0.001)  # 1 µs a row: the cap decides
    assert trivial.size(remaining=1_000_000, slots=4) == 4096


def test_user_modules_travel_by_value_installed_ones_by_reference() -> None:
    from ray import cloudpickle

    from assay.evaluation._binding import bind_row_evaluator
    from assay.evaluators import CodeCorrectnessEvaluator
    from assay.executors.ray._shipping import send_user_code_by_value

    pipeline = RowPipeline(
        Target(workload.doubling_async),
        [bind_row_evaluator(CodeCorrectnessEvaluator()), bind_row_evaluator(workload.ratio)],
    )
    assert send_user_code_by_value(pipeline) == [workload.__name__]
    assert workload.__name__ in cloudpickle.list_registry_pickle_by_value()
