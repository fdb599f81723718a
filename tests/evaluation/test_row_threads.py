"""``RowThreads``: worker threads started without a hand-shake still carry the caller's
context, report their outcome, and are all joined before the writer closes."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from assay import Client
from assay.evaluation._threads import RowThreads

where: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="unset")


def test_outcomes_context_and_join() -> None:
    finished: list[int] = []

    async def main() -> None:
        threads = RowThreads()
        where.set("the caller's")

        def work(i: int) -> str:
            time.sleep(0.01 * (i % 3))
            finished.append(i)
            return where.get()

        def fails() -> None:
            raise LookupError("row 7")

        futures = [threads.start(lambda i=i: work(i)) for i in range(20)]
        assert await asyncio.gather(*futures) == ["the caller's"] * 20
        with pytest.raises(LookupError, match="row 7"):
            await threads.start(fails)
        slow = threads.start(lambda: time.sleep(0.2))
        slow.cancel()  # nobody waits for it any more; join still does
        started = time.perf_counter()
        threads.join()
        assert time.perf_counter() - started > 0.1

    asyncio.run(main())
    assert sorted(finished) == list(range(20))


def test_a_failing_row_with_raise_stores_every_finished_row_first(tmp_path) -> None:
    client = Client(str(tmp_path / "t.db"))
    done: list[int] = []
    lock = threading.Lock()

    def target(inputs: dict) -> dict:
        time.sleep(0.02)  # rows wait: the ramp starts many threads
        if inputs["x"] == 150:
            raise RuntimeError("the model is down")
        with lock:
            done.append(inputs["x"])
        return inputs

    with pytest.raises(Exception, match="the model is down"):
        client.evaluate(
            target,
            data=[{"x": i} for i in range(400)],
            max_concurrency=64,
            error_handling="raise",
            experiment="e",
        )
    stored = {row["run"].inputs["x"] for row in client.read_experiment("e")}
    assert set(done) <= stored  # no thread was still running when the writer closed
    client.close()


def test_a_silent_experiment_imports_no_terminal_report(tmp_path) -> None:
    """``progress=False`` neither draws nor imports the report (rich); a run in a
    terminal-less process without ``progress=`` still prints the plain report."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from assay import Client, evaluate\n"
        f"client = Client({str(tmp_path / 'r.db')!r})\n"
        "evaluate(lambda inputs: inputs, data=[{'inputs': {'x': 1}}], evaluators=[lambda outputs: 1], "
        "client=client, progress=False)\n"
        "print('rich' in sys.modules, 'assay.report.terminal' in sys.modules)\n"
        "evaluate(lambda inputs: inputs, data=[{'inputs': {'x': 1}}], client=client)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
    assert "rows" in done.stderr.lower() or "experiment" in done.stderr.lower(), done.stderr


def test_row_threads_take_the_threading_trace_hook() -> None:
    """coverage.py, debuggers and profilers reach new threads through threading.settrace."""
    seen: list[str] = []

    def tracer(frame, event, arg):  # noqa: ANN001, ANN202
        if event == "call":
            seen.append(frame.f_code.co_name)
        return None

    def traced_row() -> int:
        return 1

    async def main() -> None:
        threads = RowThreads()
        assert await threads.start(traced_row) == 1
        threads.join()

    threading.settrace(tracer)
    try:
        asyncio.run(main())
    finally:
        threading.settrace(None)  # type: ignore[arg-type]
    assert "traced_row" in seen


def test_thread_ends_wake_the_loop_for_the_first_the_failures_and_the_last() -> None:
    """Each ending thread used to wake the event loop (a write to its socket, the GIL
    handed over and back): 256 wake-ups among the last rows of a latency-bound run.
    Now the first end (the ramp watches for it), each failure and the last end do;
    every outcome is settled by then. Counted in wake-ups, ends ordered by events."""

    async def main() -> tuple[int, list[object]]:
        loop = asyncio.get_running_loop()
        wakes = 0
        call_soon_threadsafe = loop.call_soon_threadsafe

        def counted(*args: object, **kwargs: object) -> object:
            nonlocal wakes
            wakes += 1
            return call_soon_threadsafe(*args, **kwargs)  # type: ignore[arg-type]

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        threads = RowThreads()
        turns = [threading.Event() for _ in range(40)]

        def row(i: int) -> int:
            turns[i].wait()  # ends in turn: i after i - 1
            try:
                if i == 20:
                    raise ValueError("row 20")
                return i
            finally:
                if i + 1 < len(turns):
                    turns[i + 1].set()

        futures = [threads.start(lambda i=i: row(i)) for i in range(40)]
        turns[0].set()
        outcomes = await asyncio.gather(*futures, return_exceptions=True)
        threads.join()
        return wakes, outcomes

    wakes, outcomes = asyncio.run(main())
    assert outcomes[:20] == list(range(20)) and isinstance(outcomes[20], ValueError)
    assert outcomes[21:] == list(range(21, 40))
    assert wakes == 3, wakes  # the first end, the failure, the last end (before: one a thread)
