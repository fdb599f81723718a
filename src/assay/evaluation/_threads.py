"""Row worker threads that start without a hand-shake.

``threading.Thread.start`` (and so a ``ThreadPoolExecutor``) waits until the new thread
has run its first Python code: the OS must schedule it and it must take the GIL, while
up to hundreds of busy row threads hand the GIL around. Starting 128 threads that way
took 80-180 ms on this loaded machine, and the ramp was blocked meanwhile. These threads
are started with ``_thread.start_new_thread``, which returns once the OS thread exists,
so a ramp starts all of a doubling's threads at once and they begin as they get a CPU.

They are not ``threading.Thread`` objects (``threading.current_thread()`` in one gives a
dummy thread), but they take the hooks of ``threading.settrace``/``setprofile`` as those
do; whoever starts them joins them with ``join`` before the writer closes.

Their outcomes reach the event loop in few wake-ups: the first thread to end, any that
fails and the last one wake it, and each wake-up settles every outcome in by then. A
thread that ends in between only leaves its outcome (latency-bound rows end their 256
threads among the last rows' ends: each wake-up was a write to the loop's socket, the
GIL handed over and taken back, and the loop taking it once more).
"""

from __future__ import annotations

import _thread
import asyncio
import contextvars
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

_Outcome = tuple[bool, Any]  # (True, result) or (False, the exception raised)


class RowThreads:
    """Threads running one function each; each one's outcome settles an asyncio future."""

    def __init__(self) -> None:
        self._running = 0
        self._ended = 0
        self._idle = threading.Condition()
        # outcomes not settled yet: deque's append and popleft are atomic, no lock needed
        self._outcomes: deque[tuple[asyncio.Future[Any], _Outcome]] = deque()

    def start(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        """Run ``fn`` in a new thread, with this context's contextvars (the current store,
        tracing); the returned future (on the running loop) gets its result or error."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        context = contextvars.copy_context()
        trace, profile = threading.gettrace(), threading.getprofile()

        def run() -> None:
            # What threading.Thread does first: debuggers, profilers and coverage.py set
            # these hooks with threading.settrace/setprofile for every new thread.
            if trace is not None:
                sys.settrace(trace)
            if profile is not None:
                sys.setprofile(profile)
            try:
                outcome: _Outcome = (True, context.run(fn))
            except BaseException as exc:  # noqa: BLE001 - handed to the future
                outcome = (False, exc)
            self._outcomes.append((future, outcome))  # before the count: a wake-up finds it
            with self._idle:
                self._running -= 1
                self._ended += 1
                wake = not outcome[0] or self._ended == 1 or self._running == 0
                self._idle.notify_all()
            if wake:
                try:
                    loop.call_soon_threadsafe(self._settle_ended)
                except RuntimeError:  # the loop is closed: nobody waits for these outcomes
                    pass

        with self._idle:
            self._running += 1
        try:
            _thread.start_new_thread(run, ())
        except BaseException:
            with self._idle:
                self._running -= 1
            raise
        return future

    def join(self) -> None:
        """Wait until every started thread has returned."""
        with self._idle:
            self._idle.wait_for(lambda: self._running == 0)

    def _settle_ended(self) -> None:
        """On the loop: settle every outcome left so far."""
        while self._outcomes:
            _settle(*self._outcomes.popleft())


def _settle(future: asyncio.Future[Any], outcome: _Outcome) -> None:
    if future.done():  # cancelled meanwhile
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
