"""Running a coroutine from sync code, whether or not an event loop is already running."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import signal
import socket
import threading
from collections.abc import Awaitable, Coroutine, Iterator
from typing import Any, TypeVar

__all__ = ["interrupt_the_main_task", "run_coroutine"]

T = TypeVar("T")

# The task ``run_coroutine`` runs on the main thread's loop, while it runs.
_main_task: asyncio.Task[Any] | None = None


async def _boxed(awaitable: Awaitable[T]) -> tuple[T | None, KeyboardInterrupt | None]:
    """An interrupt leaves the loop as a value: raised inside the task, asyncio would also
    log it as an exception never retrieved."""
    try:
        with _signals_wake_the_loop():
            return await awaitable, None
    except KeyboardInterrupt as exc:
        return None, exc
    except asyncio.CancelledError as exc:  # Ctrl-C cancels the main task: raise its report
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return None, exc.__cause__
        raise


@contextlib.contextmanager
def _signals_wake_the_loop() -> Iterator[None]:
    """Make a signal wake the loop whichever thread the kernel delivers it to.

    Python runs signal handlers in the main thread only, when it next runs Python code.
    The kernel may deliver SIGINT to a row thread; the main thread, blocked in the loop's
    ``epoll_wait`` until a row thread finishes, would then see the Ctrl-C only once every
    row had run (or never, if the experiment ended with no further ``await``). With a
    wakeup fd, the C-level handler writes a byte the loop wakes on, in any thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread handles signals (and may set the wakeup fd)
        return
    global _main_task
    loop = asyncio.get_running_loop()
    receive, send = socket.socketpair()
    with receive, send:
        receive.setblocking(False)
        send.setblocking(False)
        loop.add_reader(receive.fileno(), _drain, receive)
        previous = signal.set_wakeup_fd(send.fileno(), warn_on_full_buffer=False)
        _main_task = asyncio.current_task()
        try:
            yield
        finally:
            _main_task = None
            signal.set_wakeup_fd(previous)
            loop.remove_reader(receive.fileno())


def interrupt_the_main_task() -> bool:
    """Cancel the running experiment's task as Ctrl-C would (from a signal handler on the
    main thread); False when none runs. For signals that must interrupt even where
    SIGINT is ignored, so that ``asyncio.run`` installed no Ctrl-C handler."""
    if _main_task is None or _main_task.done():
        return False
    _main_task.cancel()
    return True


def _drain(receive: socket.socket) -> None:
    """The bytes only woke the loop; the main thread now runs the pending handlers."""
    with contextlib.suppress(OSError):
        while receive.recv(512):
            pass


def _unboxed(outcome: tuple[T | None, KeyboardInterrupt | None]) -> T:
    value, interrupt = outcome
    if interrupt is not None:
        raise interrupt
    return value  # type: ignore[return-value]


def run_coroutine(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion from sync code, even inside a running loop."""
    coroutine = awaitable if isinstance(awaitable, Coroutine) else _wait_for(awaitable)
    try:
        asyncio.get_running_loop()
        in_loop = True
    except RuntimeError:
        in_loop = False
    if not in_loop:  # outside the except block, so tracebacks carry no "during handling"
        return _unboxed(asyncio.run(_boxed(coroutine)))  # type: ignore[no-any-return]
    # Called from inside a running loop (a notebook, an async app): use a private one.
    outcome: dict[str, Any] = {}

    context = contextvars.copy_context()  # the caller's context variables come along

    def runner() -> None:
        try:
            outcome["value"] = context.run(asyncio.run, _boxed(coroutine))
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=runner, name="assay-evaluate")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return _unboxed(outcome["value"])  # type: ignore[no-any-return]


async def _wait_for(awaitable: Awaitable[T]) -> T:
    return await awaitable
