"""The Ray executor on a real two-node cluster (``ray start`` on loopback): the same
experiment run locally and through Ray stores the same rows, scores and aggregates; a
worker killed mid-run loses and duplicates nothing; the code evaluator's sandbox runs in
the workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import Client, evaluate
from assay.executors import RayExecutor

workload = sys.modules["assay_tests_executors_workload"]  # loaded by conftest.py

pytestmark = pytest.mark.slow


@pytest.fixture
def executor(ray_cluster: str) -> Iterator[RayExecutor]:
    ray_executor = RayExecutor(address=ray_cluster)
    yield ray_executor
    ray_executor.shutdown()  # its workers; the session's connection stays


@pytest.fixture
def client(tmp_path: Any) -> Iterator[Client]:
    store = Client(str(tmp_path / "assay.db"))
    yield store
    store.close()


def numbers(client: Client, n: int, name: str = "numbers") -> str:
    client.create_dataset(name)
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name=name,
    )
    return name


def stored(client: Client, name: str) -> dict[tuple[str, int], Any]:
    """Every stored row by (example, repetition), as the data that must not depend on
    where it ran: outputs, the target's error, each result's key, score, value, error."""
    rows = {}
    for row in client.read_experiment(name):
        run = row["run"]
        key = (str(row["example"].id), run.extra.get("repetition", 0))
        assert key not in rows, f"row {key} stored twice"
        results = sorted(
            (r.key, r.score, r.value, None if r.error is None else r.error.splitlines()[-1])
            for r in row["evaluation_results"]["results"]
        )
        error = None if run.error is None else run.error.splitlines()[0]
        rows[key] = (run.outputs, error, results)
    return rows


def aggregates(client: Client, name: str) -> Any:
    results = client.read_experiment(name)
    stats = results.stats
    assert stats is not None and stats.final
    metrics = sorted((m.key, m.n, m.errors, round(m.mean or 0, 9)) for m in stats.metrics or [])
    summary = [(r.key, r.score) for r in results.summary_results.results]
    return stats.rows, stats.run_errors, metrics, summary


def run_both(
    client: Client, executor: RayExecutor, target: Any, evaluators: list[Any], **options: Any
) -> None:
    for name, chosen in (("local", None), ("ray", executor)):
        evaluate(
            target,
            evaluators=evaluators,
            summary_evaluators=[workload.accuracy],
            client=client,
            experiment=name,
            progress=False,
            executor=chosen,
            **options,
        )


def test_sync_experiment_is_the_same_through_ray(client: Client, executor: RayExecutor) -> None:
    data = numbers(client, 300)
    run_both(
        client, executor, workload.doubling, [workload.doubled, workload.ratio], data=data, num_repetitions=2
    )
    local, through_ray = stored(client, "local"), stored(client, "ray")
    assert len(local) == 600
    assert through_ray == local
    assert aggregates(client, "ray") == aggregates(client, "local")
    failed = [key for key, (_, error, _) in through_ray.items() if error]
    assert len(failed) == 2 * len([x for x in range(300) if x % 7 == 3])  # data, not retries
    assert "ValueError: no answer for 3" in {e for _, e, _ in through_ray.values() if e}
    assert executor.resent_batches == 0


def test_async_target_and_evaluators_are_the_same_through_ray(client: Client, executor: RayExecutor) -> None:
    data = numbers(client, 200)
    evaluators = [workload.doubled, workload.labelled, workload.ratio]
    run_both(client, executor, workload.doubling_async, evaluators, data=data)
    assert stored(client, "ray") == stored(client, "local")
    assert aggregates(client, "ray") == aggregates(client, "local")


def test_rows_run_in_worker_processes_on_both_nodes(client: Client, executor: RayExecutor) -> None:
    data = numbers(client, 64)
    evaluate(
        workload.where_it_ran, data=data, client=client, experiment="where", progress=False, executor=executor
    )
    rows = list(client.read_experiment("where"))
    assert len(rows) == 64
    assert os.getpid() not in {row["run"].outputs["pid"] for row in rows}
    assert len({row["run"].outputs["node"] for row in rows}) == 2
    assert set(executor.worker_pids()) == {row["run"].outputs["pid"] for row in rows}


def test_a_killed_worker_has_its_rows_run_elsewhere(client: Client, executor: RayExecutor) -> None:
    n = 600
    data = numbers(client, n)
    results = evaluate(
        workload.slow_doubling,
        data=data,
        evaluators=[workload.doubled],
        client=client,
        experiment="killed",
        progress=False,
        executor=executor,
        blocking=False,
    )
    victim = None
    for seen, _ in enumerate(results, 1):
        if seen == 60:  # batches are in flight on every worker by now
            victim = executor.worker_pids()[0]
            os.kill(victim, signal.SIGKILL)
    results.wait()
    rows = stored(client, "killed")
    assert len(rows) == n
    assert all(
        error is None and scores == [("doubled", 1.0, None, None)] for _, error, scores in rows.values()
    )
    assert client.read_experiment("killed").stats.rows == n
    assert executor.resent_batches >= 1


def test_env_chooses_ray(client: Client, ray_cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = numbers(client, 20)
    monkeypatch.setenv("ASSAY_EXECUTOR", "ray")
    monkeypatch.setenv("ASSAY_RAY_ADDRESS", ray_cluster)
    from assay.evaluation import executor as base

    chosen = base.executor_from_env()
    assert isinstance(chosen, RayExecutor) and chosen.address == ray_cluster
    chosen.shutdown()
    evaluate(workload.where_it_ran, data=data, client=client, experiment="env", progress=False)
    pids = {row["run"].outputs["pid"] for row in client.read_experiment("env")}
    assert os.getpid() not in pids


def test_code_correctness_runs_in_the_workers_sandboxes(client: Client, executor: RayExecutor) -> None:
    from assay.evaluators import CodeCorrectnessEvaluator

    test = "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(-1) == 1\n"
    answers = [
        "def f(x):\n    return x * x\n",
        "def f(x):\n    return 2 * x\n",
        "def f(x):\n    raise SystemExit(0)\n",
        "import os\ndef f(x):\n    os._exit(0)\n",
    ]
    client.create_dataset("code")
    client.create_examples(
        inputs=[{"prompt": "", "test": test, "entry_point": "f", "answer": answers[i % 4]} for i in range(24)]
        + [{"prompt": "", "test": test, "entry_point": "f", "answer": "def f(x):\n    while True: pass\n"}],
        dataset_name="code",
    )
    evaluator = CodeCorrectnessEvaluator(execution_timeout=1)

    def write_code(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"text": inputs["answer"]}

    for name, chosen in (("code-local", None), ("code-ray", executor)):
        evaluate(
            write_code,
            data="code",
            evaluators=[evaluator],
            client=client,
            experiment=name,
            progress=False,
            executor=chosen,
        )
    local, through_ray = stored(client, "code-local"), stored(client, "code-ray")
    assert through_ray == local
    scores = sorted(scores[0][1] for _, _, scores in through_ray.values())
    assert scores == [0.0] * 19 + [1.0] * 6  # the candidate's crash and loop are failures, not errors
    assert all(scores[0][3] is None for _, _, scores in through_ray.values())


def test_a_row_that_kills_every_worker_stops_the_run_after_the_attempts(
    client: Client, ray_cluster: str
) -> None:
    from assay.executors.ray import RayExecutorError

    data = numbers(client, 200)
    with RayExecutor(address=ray_cluster, max_attempts=2) as executor:
        with pytest.raises(RayExecutorError, match=r"2 workers died running a batch of \d+ rows .* resume"):
            evaluate(
                workload.dies_on_13,
                data=data,
                client=client,
                experiment="poison",
                progress=False,
                executor=executor,
            )
    record = client.store.get_experiment(name="poison")
    assert record is not None and record.status == "failed"
    rows = stored(client, "poison")  # what finished is kept, once each
    assert 0 < len(rows) < 200
    assert all(error is None for _, error, _ in rows.values())


CLIENT_SCRIPT = """
import json, os, sys
from assay import Client, evaluate
from assay.executors import RayExecutor

def square(inputs):
    return {"y": inputs["x"] ** 2, "pid": os.getpid()}

async def even(outputs):
    return outputs["y"] % 2 == 0

with RayExecutor(address=sys.argv[1]) as executor:
    results = evaluate(square, data=[{"inputs": {"x": i}} for i in range(30)], evaluators=[even],
                       client=Client("sqlite://"), progress=False, executor=executor)
    rows = [(row["run"].outputs, row["evaluation_results"]["results"][0].score) for row in results]
print(json.dumps({"driver": os.getpid(), "rows": rows}))
"""


def _client_server_logs(temp_dir: str) -> str:
    """The tails of the cluster's Ray Client server logs: why a client's server died."""
    tails = [
        f"\n--- {log.name}\n" + log.read_text(errors="replace")[-1500:]
        for log in sorted(Path(temp_dir).glob("session_*/logs/ray_client_server*.err"))
    ]
    return "".join(tails)


# Ray's proxier starts a server per client; now and then that server dies at once (Ray's
# log: "Starting Ray client server failed", or psutil finds it a zombie), before any of
# our code runs in it. That start alone is tried again (up to four tries: at load a
# retry on the same proxier failed too, its new server dying with "epoll_wait error: Bad
# file descriptor", December 2026); any other failure fails.
RAY_CLIENT_START_FAILURES = ("Starting Ray client server failed", "psutil.ZombieProcess")


def _ray_client_server_failed_to_start(stderr: str) -> bool:
    return "Initialization failure from server" in stderr and any(
        failure in stderr for failure in RAY_CLIENT_START_FAILURES
    )


def test_ray_client_address(local_cluster: Any, tmp_path: Any) -> None:
    """``ray://``: a driver elsewhere, through Ray Client (its own process: this one is
    already a driver of the cluster)."""
    script = tmp_path / "client_run.py"
    script.write_text(CLIENT_SCRIPT, encoding="utf-8")
    for _attempt in range(4):
        done = subprocess.run(
            [sys.executable, str(script), local_cluster.client_address],
            capture_output=True,
            text=True,
            timeout=180,
        )
        if done.returncode == 0 or not _ray_client_server_failed_to_start(done.stderr):
            break
    assert done.returncode == 0, done.stderr[-3000:] + _client_server_logs(local_cluster.temp_dir)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    rows = report["rows"]
    assert sorted(outputs["y"] for outputs, _ in rows) == [i * i for i in range(30)]
    assert all(score == (outputs["y"] % 2 == 0) for outputs, score in rows)
    assert report["driver"] not in {outputs["pid"] for outputs, _ in rows}


def test_error_handling_raise_stops_a_ray_run_at_the_first_failed_row(
    client: Client, executor: RayExecutor
) -> None:
    from assay.evaluation._runner import RowFailedError

    data = numbers(client, 100)
    with pytest.raises(RowFailedError, match=r"the target failed on example .*no answer for \d+"):
        evaluate(
            workload.doubling,
            data=data,
            client=client,
            experiment="raising",
            progress=False,
            executor=executor,
            error_handling="raise",
        )
    record = client.store.get_experiment(name="raising")
    assert record is not None and record.status == "failed"


def test_a_target_that_cannot_be_pickled_is_named(client: Client, executor: RayExecutor) -> None:
    import threading

    from assay.executors.ray import RayExecutorError

    lock = threading.Lock()

    def guarded(inputs: dict[str, Any]) -> dict[str, Any]:
        with lock:
            return inputs

    with pytest.raises(
        RayExecutorError,
        match=r"the target 'guarded' or its evaluators cannot be sent to the Ray workers: TypeError: cannot pickle '_thread.lock' object\. Create",
    ):
        evaluate(guarded, data=numbers(client, 3), client=client, progress=False, executor=executor)
