"""Per-model concurrency limits, shared by every judge in the process.

The limiters live on the I/O loop (``_io_loop``), where every model call runs, so one
limit covers all evaluators, experiments and threads that call the same model.
"""

from __future__ import annotations

import asyncio
from collections import deque
from types import TracebackType


class ModelLimiter:
    """A semaphore whose capacity may shrink later (asyncio's cannot)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        while self.active >= self.capacity:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_next()  # we were woken but will not use the slot: pass it on
                raise
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.active += 1

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.active -= 1
        self._wake_next()

    def _wake_next(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


_limiters: dict[tuple[str, str], ModelLimiter] = {}


def model_limiter(base_url: str, model: str, capacity: int) -> ModelLimiter:
    """The limiter of ``(base_url, model)``; use it on the I/O loop only.

    When two configurations of one model ask for different limits, the smaller one wins:
    the limit protects the server, which has one real capacity.
    """
    key = (base_url, model)
    limiter = _limiters.get(key)
    if limiter is None:
        limiter = _limiters[key] = ModelLimiter(capacity)
    elif capacity < limiter.capacity:
        limiter.capacity = capacity
    return limiter
