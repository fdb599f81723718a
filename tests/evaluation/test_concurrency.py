"""Repetitions, data order under concurrency, and the bound on rows in flight."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext

import pytest

from assay import Client


def test_repetitions_run_every_example_n_times(client: Client, examples: list[dict]) -> None:
    calls: list[int] = []

    def target(inputs: dict) -> dict:
        calls.append(inputs["x"])
        return {"y": 2 * inputs["x"]}

    results = client.evaluate(target, data=examples, num_repetitions=3)
    rows = list(results)
    assert len(rows) == 18 and sorted(calls) == sorted(list(range(6)) * 3)
    assert [(r["example"].inputs["x"], r["run"].extra["repetition"]) for r in rows] == [
        (x, rep) for x in range(6) for rep in range(3)
    ]
    stored = client.read_experiment(results.experiment_name)
    assert [(r.example.inputs["x"], r.repetition) for r in stored.rows] == [
        (x, rep) for x in range(6) for rep in range(3)
    ]


async def test_async_rows_come_back_in_data_order_within_the_bound(client: Client) -> None:
    in_flight = peak = 0
    data = [{"inputs": {"x": i}} for i in range(60)]

    async def target(inputs: dict) -> dict:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(random.uniform(0, 0.01))
        in_flight -= 1
        return {"x": inputs["x"]}

    results = await client.aevaluate(target, data=data, max_concurrency=7)
    assert [row["run"].outputs["x"] for row in results] == list(range(60))
    assert peak == 7


def test_sync_rows_that_wait_run_concurrently_within_the_bound(client: Client) -> None:
    lock = threading.Lock()
    in_flight = peak = 0
    slept: list[float] = []
    span = [float("inf"), 0.0]  # the first row's start, the last row's end
    data = [{"inputs": {"x": i}} for i in range(40)]

    def target(inputs: dict) -> dict:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        began = time.perf_counter()
        time.sleep(random.uniform(0.005, 0.02))  # an I/O-bound call, like a model request
        ended = time.perf_counter()
        with lock:
            slept.append(ended - began)
            span[:] = [min(span[0], began), max(span[1], ended)]
            in_flight -= 1
        return {"x": inputs["x"]}

    results = client.evaluate(target, data=data, max_concurrency=8)
    assert [row["run"].outputs["x"] for row in results] == list(range(40))
    assert 2 <= peak <= 8
    # Faster than one at a time could be: that takes the rows' own waits end to end (a
    # loaded machine stretches those waits as much as the rows' span). The span, not the
    # whole call: a first experiment's start-up took 5.4 s at load 20 (0.7 s of waits).
    assert span[1] - span[0] < sum(slept)


def test_mixed_sync_target_and_async_evaluator_keep_evaluator_order(
    client: Client, examples: list[dict]
) -> None:
    def first(outputs) -> int:
        return 1

    async def second(outputs) -> int:
        await asyncio.sleep(0)
        return 2

    def third(outputs) -> int:
        return 3

    results = client.evaluate(lambda inputs: inputs, data=examples, evaluators=[first, second, third])
    for row in results:
        assert [r.key for r in row["evaluation_results"]["results"]] == ["first", "second", "third"]


def _in_flight_probe() -> tuple[Callable[[], None], Callable[[], None], Callable[[], int]]:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def enter() -> None:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])

    def leave() -> None:
        with lock:
            state["now"] -= 1

    return enter, leave, lambda: state["peak"]


def test_latency_bound_rows_reach_the_asked_concurrency_at_once(client: Client) -> None:
    enter, leave, peak = _in_flight_probe()
    finished: list[int] = []
    finished_when_reached: list[int] = []

    def model_call(inputs: dict) -> dict:
        enter()
        if peak() >= 0.85 * 256 and not finished_when_reached:
            finished_when_reached.append(len(finished))
        time.sleep(0.05)
        leave()
        finished.append(1)
        return inputs

    client.evaluate(model_call, data=[{"x": i} for i in range(2000)], max_concurrency=256)
    assert finished_when_reached, f"only {peak()} of 256 rows were ever in flight"
    # Counted in rows, not seconds, so that a loaded machine slows both sides alike: the
    # threads are all there within the first wave of 256 rows. One thread per 5 ms tick
    # (an older ramp) got there after ~20 waves.
    assert finished_when_reached[0] < 256


def _ramp_steps(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "assay.evaluation.threads"]


def test_a_waiting_first_row_sizes_the_threads_in_one_or_two_steps(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """The first row's own evidence (it waited with next to no CPU) decides, before any
    row finished; doubling from 1 to 64 took six steps, one per tick."""
    enter, leave, peak = _in_flight_probe()
    finished: list[int] = []
    started_before_a_row_finished: list[int] = []

    def model_call(inputs: dict) -> dict:
        enter()
        if not finished:
            started_before_a_row_finished.append(1)
        time.sleep(0.3)
        leave()
        finished.append(1)
        return inputs

    with caplog.at_level(logging.DEBUG, logger="assay.evaluation.threads"):
        client.evaluate(model_call, data=[{"x": i} for i in range(128)], max_concurrency=64)
    steps = _ramp_steps(caplog)
    assert steps and steps[-1].startswith("row threads: ") and "-> 64 " in steps[-1], steps
    # Usually one or two steps (the first row's CPU so far includes its cold start; over
    # the next tick it is ~0); a third leaves room for a machine that starves the row.
    # Either evidence may decide first: the first row's own clocks, or (on a loaded
    # machine, where its first tick showed CPU) the workers' waiting share.
    assert len(steps) <= 3, steps
    assert all("(the first row waits)" in s or "(the workers wait)" in s for s in steps), steps
    assert peak() == 64 and len(started_before_a_row_finished) == 64


def test_cpu_bound_rows_gain_no_useless_threads(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    enter, leave, peak = _in_flight_probe()

    def compute(inputs: dict) -> dict:
        enter()
        deadline = time.thread_time() + 0.002
        while time.thread_time() < deadline:  # 2 ms of CPU, however loaded the machine
            pass
        leave()
        return inputs

    with caplog.at_level(logging.DEBUG, logger="assay.evaluation.threads"):
        client.evaluate(compute, data=[{"x": i} for i in range(300)], max_concurrency=64)
    assert peak() <= 8
    assert not any("the first row waits" in step for step in _ramp_steps(caplog))


@contextmanager
def _a_busy_cpu() -> Iterator[int]:
    """One of this process's CPUs, kept busy by a process of its own."""
    cpu = min(os.sched_getaffinity(0))
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        os.sched_setaffinity(hog.pid, {cpu})
        yield cpu
    finally:
        hog.kill()
        hog.wait()


@contextmanager
def _kept_off_the_cpu(cpu: int) -> Iterator[None]:
    """The calling thread runnable but all but starved, as on a machine at load 8 or
    more: pinned to the busy ``cpu``, at the idle scheduling class (a weight of 3
    against the busy process's 1,024), so its CPU comes in rare slices and its queued
    stretches are long. No clock involved: the kernel decides."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})  # 0: this thread (Linux)
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    try:
        yield
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        os.sched_setaffinity(0, allowed)


def test_a_computing_first_row_the_os_keeps_off_the_cpu_gains_no_threads(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """A computing row queued for a CPU is runnable, not waiting. Linux's schedstat
    adds a queued stretch only when it ends, so on a loaded machine the first row
    looked idle for a tick and the ramp started 64 threads for CPU-bound rows (seen
    once in ten at load ~100: 28 rows in flight)."""
    enter, leave, peak = _in_flight_probe()
    first = threading.Lock()

    def compute(inputs: dict) -> dict:
        enter()
        starved = _kept_off_the_cpu(busy) if first.acquire(blocking=False) else nullcontext()
        with starved:
            deadline = time.thread_time() + 0.002
            while time.thread_time() < deadline:
                pass
        leave()
        return inputs

    with _a_busy_cpu() as busy, caplog.at_level(logging.DEBUG, logger="assay.evaluation.threads"):
        client.evaluate(compute, data=[{"x": i} for i in range(100)], max_concurrency=64)
    steps = _ramp_steps(caplog)
    assert peak() <= 8, steps
    assert not any("the first row waits" in step or "the workers wait" in step for step in steps), steps


def test_the_ramp_reads_no_clock_of_a_worker_that_ended() -> None:
    """A worker that found the feed empty ends at once; a thread's CPU clock is gone
    with it (reading it raises EINVAL), and the ramp's next tick must not fail on it."""
    from assay.evaluation._ramp import Load

    load = Load()

    def worker() -> None:
        load.worker_started()
        load.first_row_started()
        time.sleep(0.01)

    ended = threading.Thread(target=worker)
    ended.start()
    ended.join()
    time.sleep(0.01)
    assert load.workers_wait(ask_the_os=False) == 0.0  # no live worker: the process's share decides
    assert load.first_row_threads(64) is None


def test_no_thread_is_added_before_a_row_has_begun() -> None:
    """The first worker may not be scheduled for a while (a loaded machine, a writer
    process starting): the process then looks idle, which says nothing about the rows.
    The ramp took that for waiting rows and started every thread (CPU-bound rows then
    got max_concurrency threads); it now waits for a row's own evidence. Counted in
    the ramp's ticks, not in seconds."""
    from assay.evaluation._feed import RowFeed
    from assay.evaluation._ramp import Load, ramp

    class CountedTicks(Load):
        ticks = 0

        def computing_share(self) -> float:  # read once a tick
            self.ticks += 1
            return super().computing_share()

    async def main() -> list[int]:
        load, grown = CountedTicks(), []
        not_begun = asyncio.get_running_loop().create_future()  # its thread never runs a row
        feed = RowFeed(iter([]), 1, set(), total=100)
        ramping = asyncio.ensure_future(ramp([not_begun], grown.append, load, feed, 64))
        while load.ticks < 5 and not ramping.done():
            await asyncio.sleep(0.001)
        ramping.cancel()
        return grown

    assert asyncio.run(main()) == []


def test_the_run_collects_its_young_objects_as_its_last_row_is_handed_out(client: Client) -> None:
    """The run's young objects (its rows' records) are collected as the feed hands out
    its last row: every row still to finish is running then, latency-bound ones
    waiting. Not after the last row (2.5-3.7 ms of 1,024 rows, on the end's clock: the
    run's raised collector threshold held every young collection off until then), nor
    as the first thread ends (then among the last rows' ends, 3.7-9 ms of 1,024). Here
    the last rows wait for that collection: before, no thread could end until one of
    them did, and they waited out ``stuck_s`` (a failure bound, not a timing)."""
    import gc

    stuck_s = 10.0
    last_wave, collected = threading.Event(), threading.Event()
    waited_out: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        # a collection before (a module imported on first use, say) is not the one
        if phase == "stop" and info["generation"] == 0 and last_wave.is_set():
            collected.set()

    def model_call(inputs: dict) -> dict:
        if inputs["x"] < 8:
            time.sleep(0.05)  # waiting rows: the ramp starts all eight threads
            return {}
        last_wave.set()  # one row a thread now
        if not collected.wait(stuck_s):
            waited_out.append(inputs["x"])
        return {}

    gc.callbacks.append(seen)
    try:
        client.evaluate(model_call, data=[{"x": i} for i in range(16)], max_concurrency=8)
    finally:
        gc.callbacks.remove(seen)
    assert not waited_out


def test_a_long_computing_first_row_is_read_every_millisecond_for_its_first_20_ms_only(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ramp reads a first row's evidence every millisecond (a waiting row shows it
    within one or two), but a first row still computing after 20 ms is read every 5 ms,
    so that it is not made to hand the GIL over a thousand times a second. Counted in
    the ramp's ticks during the row against the row's own time: a loaded machine only
    makes ticks later, never more."""
    from assay.evaluation import _runner
    from assay.evaluation._ramp import Load

    running = threading.Event()
    ticks_while_running: list[int] = []

    class CountedTicks(Load):
        def computing_share(self) -> float:  # read once a tick
            if running.is_set():
                ticks_while_running.append(1)
            return super().computing_share()

    monkeypatch.setattr(_runner, "Load", CountedTicks)
    walls: list[float] = []

    def compute(inputs: dict) -> dict:
        started = time.perf_counter()
        if inputs["x"] == 0:
            running.set()
        deadline = time.thread_time() + 0.15  # 150 ms of CPU, however loaded the machine
        while time.thread_time() < deadline:
            pass
        running.clear()
        walls.append(time.perf_counter() - started)
        return inputs

    client.evaluate(compute, data=[{"x": i} for i in range(2)], max_concurrency=8)
    first_row_ms = walls[0] * 1000
    assert len(ticks_while_running) <= 20 + first_row_ms / 5 + 2, (len(ticks_while_running), first_row_ms)


def test_the_threads_the_ramp_adds_find_their_first_rows_planned(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop plans the rows of the threads the ramp may add while the first row
    runs (the ramp waits for its evidence then), not as it adds them: a read of 255
    examples there held all 255 new threads back. Counted in reads of the plan made
    while the ramp grows: none (one before)."""
    from assay.evaluation import _runner
    from assay.evaluation._feed import RowFeed

    growing = threading.Event()
    reads_while_growing: list[int] = []
    plan_more, ramp = RowFeed._plan_more, _runner.ramp

    def noted_plan_more(feed: RowFeed, wanted: int) -> None:
        if growing.is_set():
            reads_while_growing.append(wanted)
        plan_more(feed, wanted)

    async def noted_ramp(tasks: list, grow: Callable[[int], None], *args: object) -> None:
        def noted_grow(count: int) -> None:
            growing.set()
            try:
                grow(count)
            finally:
                growing.clear()

        await ramp(tasks, noted_grow, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(RowFeed, "_plan_more", noted_plan_more)
    monkeypatch.setattr(_runner, "ramp", noted_ramp)
    threads: set[int] = set()

    def model_call(inputs: dict) -> dict:
        threads.add(threading.get_ident())
        time.sleep(0.05)  # a model call: the ramp adds every thread at once
        return {}

    client.evaluate(model_call, data=[{"x": i} for i in range(64)], max_concurrency=64)
    assert len(threads) > 1  # the ramp grew
    assert reads_while_growing == []


def test_the_ramp_keeps_its_quick_switches_for_a_few_threads_only(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ramp shortens the GIL switch interval (0.5 ms) while it reads a few threads'
    evidence, and ends it as it starts more than eight threads, which it does only for
    rows that wait: each thread waiting for the GIL wakes once an interval to look, and
    the rows hand the GIL over at every wait anyway. Before, 256 new threads started
    under the 0.5 ms interval. Read as each grow has started its threads."""
    from assay.evaluation import _runner

    caller_s = sys.getswitchinterval()
    after_grows: list[tuple[int, float]] = []  # (threads started, interval then)
    ramp = _runner.ramp

    async def noted_ramp(tasks: list, grow: Callable[[int], None], *args: object) -> None:
        def noted_grow(count: int) -> None:
            grow(count)
            after_grows.append((len(tasks), sys.getswitchinterval()))

        await ramp(tasks, noted_grow, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_runner, "ramp", noted_ramp)

    def model_call(inputs: dict) -> dict:
        time.sleep(0.05)  # a model call: the ramp adds every thread at once
        return {}

    client.evaluate(model_call, data=[{"x": i} for i in range(64)], max_concurrency=64)
    assert after_grows and after_grows[-1][0] > 8
    assert all(interval == caller_s for threads, interval in after_grows if threads > 8), after_grows
    assert sys.getswitchinterval() == caller_s
