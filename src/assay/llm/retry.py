"""When and how long to wait before retrying a model call."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

__all__ = ["RETRYABLE_STATUSES", "RetryPolicy", "parse_retry_after"]


#: HTTP statuses worth retrying: timeouts, conflicts, rate limits and server errors
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter, bounded in attempts and in each wait.

    A ``Retry-After`` header is honoured: the wait is at least what the server asked for,
    but never more than ``max_delay`` (a server asking for an hour fails the call instead
    of hanging the experiment).
    """

    max_attempts: int = 5
    #: 429s retried on top of ``max_attempts`` while the adaptive limit settles (0: none)
    max_rate_limited: int = 50
    initial_delay: float = 0.5
    max_delay: float = 30.0
    multiplier: float = 2.0
    jitter: float = 0.5  # the backoff is scaled by a factor drawn from [1 - jitter, 1]

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"RetryPolicy.max_attempts must be >= 1, got {self.max_attempts}")
        if self.max_rate_limited < 0:
            raise ValueError(f"RetryPolicy.max_rate_limited must be >= 0, got {self.max_rate_limited}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"RetryPolicy.jitter must be within [0, 1], got {self.jitter}")
        if self.initial_delay < 0 or self.max_delay < 0:
            raise ValueError("RetryPolicy delays must be >= 0")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        backoff = self.initial_delay * self.multiplier ** (attempt - 1)
        backoff *= 1 - self.jitter * random.random()
        if retry_after is not None:
            backoff = max(backoff, retry_after)
        return min(backoff, self.max_delay)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())
