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
