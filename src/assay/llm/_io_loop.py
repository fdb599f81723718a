"""One background event loop per process that performs every model HTTP call.

Why: judges are called from the runner's loop, from ``asyncio.run`` inside sync ``run()``
calls, and from worker threads. Pooled HTTP connections and the per-model concurrency
limits must be shared by all of them, and asyncio objects belong to one loop. So the HTTP
work lives on this loop; callers await it through ``call``.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_pid: int | None = None
_closers: list[Callable[[], Awaitable[None]]] = []


def io_loop() -> asyncio.AbstractEventLoop:
    """The process's I/O loop, started on first use (and again in a forked child)."""
    global _loop, _thread, _pid
    with _lock:
        if _loop is None or _pid != os.getpid():
            loop = asyncio.new_event_loop()
            ready = threading.Event()
            thread = threading.Thread(target=_serve, args=(loop, ready), name="assay-llm-io", daemon=True)
            thread.start()
            ready.wait()
            if _pid is None:
                atexit.register(_shutdown)
            _loop, _thread, _pid = loop, thread, os.getpid()
            _closers.clear()
        return _loop


def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    loop.run_forever()


def on_io_loop() -> bool:
    return _loop is not None and threading.current_thread() is _thread


async def call(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the I/O loop from any loop; cancelling the caller cancels it."""
    if on_io_loop():
        return await coro
    future = asyncio.run_coroutine_threadsafe(coro, io_loop())
    return await asyncio.wrap_future(future)


def add_closer(closer: Callable[[], Awaitable[None]]) -> None:
    """Run ``closer`` on the I/O loop at interpreter exit (closing pooled connections)."""
    _closers.append(closer)


def _shutdown() -> None:
    loop, thread = _loop, _thread
    if loop is None or thread is None or _pid != os.getpid() or not thread.is_alive():
        return

    async def close_all() -> None:
        for closer in _closers:
            try:
                await closer()
            except Exception:  # best effort while the interpreter exits
                pass

    try:
        asyncio.run_coroutine_threadsafe(close_all(), loop).result(timeout=2)
    except Exception:
        pass
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=2)
