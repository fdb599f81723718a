"""The timeline of one run of the user's path, both processes, from a cold process.

    .venv/bin/python bench/timeline.py [N] [--rounds R] [--before SRC]

Each round is a fresh interpreter that runs ``bench/core_throughput.py``'s script (inline
data, ``evaluate`` with two row evaluators and a summary evaluator, ``list(results)``,
the summary) with the store's and the run's steps wrapped to note when they start and
end: wall time since the interpreter started, and the process's CPU time then. The
writer process is seen from the run: spawned, ready (its answer read), each commit
answered, told to stop. Its own CPU comes from its rusage once it has exited. The
median of each event over the rounds is printed, in order, with the CPU each step took.
``--before SRC`` times an earlier checkout's ``src`` folder too (as ``PYTHONPATH``), the
two alternating round by round.
"""

from __future__ import annotations

import functools
import os
import resource
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from _rounds import alternate, arguments, compile_bytecode, run_round
from core_throughput import evaluate_inline, inline_data

EVENTS: list[tuple[str, float, float]] = []


def note(name: str) -> None:
    EVENTS.append((name, time.perf_counter(), time.process_time()))


def wrap(owner: Any, attribute: str, label: str, *, once: bool = False, last: bool = False) -> None:
    """Note ``label`` start/end around ``owner.attribute`` (``once``: its first call only;
    ``last``: its last call only, noted by keeping the latest)."""
    original = getattr(owner, attribute)
    calls = [0]

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        noted = not once or calls[0] == 1
        if noted:
            _noted(f"{label} start", last)
        try:
            return original(*args, **kwargs)
        finally:
            if noted:
                _noted(f"{label} end", last)

    setattr(owner, attribute, wrapper)


def _noted(name: str, last: bool) -> None:
    if last:
        for i in range(len(EVENTS) - 1, -1, -1):
            if EVENTS[i][0] == name:
                del EVENTS[i]
                break
    note(name)


def instrument() -> None:
    from assay.evaluation import _api, _runner, _target, _writer
    from assay.store.sqlite import SQLiteStore, _writer_process

    wrap(_api, "_prepare", _PREPARE)
    wrap(_api, "resolve_data", "inline data -> stored dataset")
    wrap(_api, "open_experiment", "open experiment")
    wrap(_api, "_feed_of", "plan rows")
    wrap(_runner, "run_rows", "run rows")
    wrap(_writer.RowWriter, "put", "first row handed to writer", once=True)
    wrap(_writer.RowWriter, "close", _CLOSE)
    wrap(_writer_process.WriterProcess, "__init__", "writer process spawn")
    wrap(_writer_process.WriterProcess, "commit", "first commit", once=True)
    wrap(_writer_process.WriterProcess, "commit", "last commit", last=True)
    wrap(_writer_process.WriterProcess, "close_building_columns", "writer told to stop + build columns")
    wrap(_api, "end_shard", "end of run (lease)")
    wrap(_api, "run_summaries", "summary evaluators")
    wrap(SQLiteStore, "finish_experiment", "finish experiment")
    wrap(SQLiteStore, "finish_shard", "lease ends (a whole run: and the experiment completes)")
    wrap(_api, "stored_rows", "rows read back")
    wrap(_target.Target, "run_sync", "first row", once=True)
    _note_full_queue_waits(_writer.RowWriter)
    original_state = _writer_process.WriterProcess.state

    def state(self: Any) -> str:
        before = self._state
        now = original_state(self)
        if before == "starting" and now != "starting":
            note(f"writer process {now} (seen)")
        return now

    _writer_process.WriterProcess.state = state  # type: ignore[method-assign]


QUEUE_WAITS = [0.0]
"""Wall seconds the row threads spent waiting on the run's full queue (the writer behind)."""


def _note_full_queue_waits(row_writer: Any) -> None:
    """Time every wait of a row thread (not the writer's own thread) on the queue's
    condition: it waits there only while the queue is full."""
    original_init = row_writer.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        wait = self._cond.wait

        def timed(timeout: float | None = None) -> bool:
            if threading.current_thread() is self._thread:
                return bool(wait(timeout))
            start = time.perf_counter()
            try:
                return bool(wait(timeout))
            finally:
                QUEUE_WAITS[0] += time.perf_counter() - start

        self._cond.wait = timed

    row_writer.__init__ = init


def child(n: int, folder: str) -> dict[str, Any]:
    age = _process_age()
    note("interpreter started")
    import assay  # noqa: F401

    note("import assay")
    instrument()
    from assay import Client

    data = inline_data(n)
    note("data built")
    client = Client(str(Path(folder) / "timeline.db"))
    note("store opened (Client)")
    results = evaluate_inline(data, client)
    note("evaluate returned")
    rows = list(results)
    score = results.summary_results.results[0].score
    note("list(results) + summary")
    assert len(rows) == n and score == 1.0
    client.close()
    note("client closed")
    from assay.store.sqlite import _writer_process

    _writer_process._wait_for_builders(None)
    note("writer process exited (columns built)")
    writer = resource.getrusage(resource.RUSAGE_CHILDREN)
    zero = EVENTS[0][1] - (age or 0.0)
    return {
        "events": [(name, wall - zero, cpu) for name, wall, cpu in EVENTS],
        "writer_cpu": writer.ru_utime + writer.ru_stime,
        "queue_waits": QUEUE_WAITS[0],
        "load": os.getloadavg()[0],
    }


def _process_age() -> float | None:
    """Seconds since this process started (/proc: its start in clock ticks since boot,
    against the time since boot): the interpreter's own start-up, before any line ran."""
    try:
        with open("/proc/self/stat") as handle:
            ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as handle:
            uptime = float(handle.read().split()[0])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return None


def main() -> None:
    args = arguments(child, n=10_000, rounds=3, before="SRC folder has it")
    if args is None:
        return
    sides: dict[str, str | None] = {"now": None, **({"before": args.before} if args.before else {})}
    environments = {
        side: dict(os.environ, PYTHONPATH=source) if source else None for side, source in sides.items()
    }
    for env in environments.values():
        compile_bytecode(env=env)

    def measure(side: str) -> dict[str, Any]:
        return run_round(__file__, [str(args.n)], env=environments[side])

    for side, figures in alternate(sides, args.rounds, measure).items():
        _table(side, figures, args.n)


def _table(side: str, rounds: list[dict[str, Any]], n: int) -> None:
    loads = [r["load"] for r in rounds]
    print(
        f"\n{side}: {n:,} examples, median of {len(rounds)} rounds, load average {min(loads):.1f}-{max(loads):.1f}"
    )
    print("(wall: since the process started, from /proc in 10 ms steps; cpu: the run's process)")
    print(f"{'event':>52} {'wall s':>8} {'cpu s':>7} {'+cpu ms':>8}")
    medians = []  # by name (the rounds may see events in another order), in order of wall time
    for name in dict.fromkeys(name for r in rounds for name, _, _ in r["events"]):
        seen = [_first(r["events"], name) for r in rounds if _first(r["events"], name) is not None]
        medians.append((statistics.median(w for w, _ in seen), statistics.median(c for _, c in seen), name))
    previous = 0.0
    for wall, cpu, name in sorted(medians):
        print(f"{name:>52} {wall:8.3f} {cpu:7.3f} {1000 * (cpu - previous):8.1f}")
        previous = cpu
    writer = statistics.median(r["writer_cpu"] for r in rounds)
    print(f"{'writer process CPU (its rusage)':>52} {'':>8} {writer:7.3f}")
    waits = sorted(1000 * r.get("queue_waits", 0.0) for r in rounds)
    print(
        f"{'rows waiting on the full queue (writer behind)':>52} {statistics.median(waits):8.1f} ms"
        f"  (rounds {', '.join(f'{t:.0f}' for t in waits)})"
    )
    firsts = sorted(1000 * _between(r["events"], _PREPARE + " start", "first row start") for r in rounds)
    print(
        f"{'evaluate called -> first row starts (per round)':>52} {statistics.median(firsts):8.1f} ms"
        f"  (rounds {', '.join(f'{t:.0f}' for t in firsts)})"
    )
    tails = sorted(1000 * _between(r["events"], _CLOSE + " start", _CLOSE + " end") for r in rounds)
    print(
        f"{'the tail: writer close, start to end (per round)':>52} {statistics.median(tails):8.1f} ms"
        f"  (rounds {', '.join(f'{t:.0f}' for t in tails)})"
    )


_CLOSE = "writer close (flush, final figures)"
_PREPARE = "prepare (check, import data, open experiment)"


def _first(events: list[tuple[str, float, float]], name: str) -> tuple[float, float] | None:
    return next(((wall, cpu) for event, wall, cpu in events if event == name), None)


def _between(events: list[tuple[str, float, float]], start: str, end: str) -> float:
    """Wall seconds from event ``start`` to event ``end`` in one round."""
    walls = {name: wall for name, wall, _ in events}
    return walls[end] - walls[start]


if __name__ == "__main__":
    main()
