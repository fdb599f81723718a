"""Per-model concurrency limits, shared by every judge in the process, adapting to the server.

The limiters live on the I/O loop (``_io_loop``), where every model call runs, so one
limit covers all evaluators, experiments and threads that call the same model.

The limit is AIMD (additive increase, multiplicative decrease, as TCP does): it starts at
the configured maximum; a 429 cuts it to ``DECREASE`` of itself, at most once per
*window* (429s of calls sent before the last cut say nothing new); every window of
successful calls as large as the limit raises it by one, never above the maximum. A
``Retry-After`` pauses new calls to the model until then. So a server that takes 20
calls at a time is run at about 20, whatever the configured maximum.

An optional tokens-per-minute budget holds new calls while the tokens of the replies of
the last minute reach it.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["DECREASE", "ModelLimiter", "all_limiters", "model_limiter"]

DECREASE = 0.75  # a 429 keeps this share of the limit
_MINUTE = 60.0


class ModelLimiter:
    """A semaphore whose capacity adapts (see the module docstring)."""

    def __init__(self, capacity: int, tokens_per_minute: int | None = None) -> None:
        self.ceiling = capacity
        self.capacity = capacity
        self.active = 0
        self.tokens_per_minute = tokens_per_minute
        self.rate_limited = 0  # 429s seen
        self._epoch = 0  # bumped by every cut: a call remembers the epoch it was sent in
        self._successes = 0
        self._paused_until = 0.0
        self._spent: deque[tuple[float, int]] = deque()
        self._waiters: deque[asyncio.Future[None]] = deque()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        """Hold one call's place; yields the epoch to report a 429 against."""
        await self._acquire()
        try:
            yield self._epoch
        finally:
            self.active -= 1
            self._wake_next()

    async def __aenter__(self) -> None:
        await self._acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self.active -= 1
        self._wake_next()

    def succeeded(self, tokens: int = 0) -> None:
        """A call came back: one step towards a higher limit; its tokens count to the budget."""
        if tokens and self.tokens_per_minute:
            self._spent.append((_now(), tokens))
        self._successes += 1
        if self._successes >= self.capacity and self.capacity < self.ceiling:
            self._successes = 0
            self.capacity += 1
            self._wake_next()

    def throttled(self, epoch: int, retry_after: float | None) -> None:
        """A 429 for a call sent in ``epoch``: cut the limit once per window, pause if asked."""
        self.rate_limited += 1
        if retry_after:
            self._paused_until = max(self._paused_until, _now() + retry_after)
        if epoch != self._epoch:
            return  # sent before the last cut: already answered for
        self._epoch += 1
        self._successes = 0
        self.capacity = max(1, math.floor(self.capacity * DECREASE))

    async def _acquire(self) -> None:
        while True:
            await self._wait_for_pause_and_budget()
            if self.active < self.capacity:
                break
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

    async def _wait_for_pause_and_budget(self) -> None:
        while True:
            wait = max(self._paused_until - _now(), self._budget_wait())
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    def _budget_wait(self) -> float:
        if not self.tokens_per_minute:
            return 0.0
        now = _now()
        while self._spent and self._spent[0][0] <= now - _MINUTE:
            self._spent.popleft()
        if sum(tokens for _, tokens in self._spent) < self.tokens_per_minute:
            return 0.0
        return self._spent[0][0] + _MINUTE - now

    def _wake_next(self) -> None:
        free = self.capacity - self.active
        while self._waiters and free > 0:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1


def _now() -> float:
    return asyncio.get_running_loop().time()


_limiters: dict[tuple[str, str], ModelLimiter] = {}


def model_limiter(
    base_url: str, model: str, capacity: int, tokens_per_minute: int | None = None
) -> ModelLimiter:
    """The limiter of ``(base_url, model)``; use it on the I/O loop only.

    When two configurations of one model ask for different limits, the smaller one wins:
    the limit protects the server, which has one real capacity.
    """
    key = (base_url, model)
    limiter = _limiters.get(key)
    if limiter is None:
        limiter = _limiters[key] = ModelLimiter(capacity, tokens_per_minute)
    elif capacity < limiter.ceiling:
        limiter.ceiling = capacity
        limiter.capacity = min(limiter.capacity, capacity)
    if tokens_per_minute and (not limiter.tokens_per_minute or tokens_per_minute < limiter.tokens_per_minute):
        limiter.tokens_per_minute = tokens_per_minute
    return limiter


def all_limiters() -> dict[tuple[str, str], ModelLimiter]:
    """Every model's limiter, for a progress display (read-only)."""
    return dict(_limiters)
