"""Token usage and cost of model calls, summed per judge result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.llm.transcript import Exchange, bounded

__all__ = ["Price", "Usage", "UsageMeter"]


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens; set it on a ``ChatModel`` to get ``cost_usd``."""

    input_per_million: float
    output_per_million: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million
        ) / 1_000_000


@dataclass(frozen=True)
class Usage:
    """Tokens actually spent (a cache hit spends none) and what they cost, when priced."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    calls: int = 0
    cached_calls: int = 0
    repaired: int = 0  # judgements whose reply was usable only after a repair
    unparsed: int = 0  # judgements whose reply never parsed (an error outcome)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cached(self) -> bool:
        """True when every call was answered from the cache."""
        return self.calls > 0 and self.cached_calls == self.calls

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=cost,
            calls=self.calls + other.calls,
            cached_calls=self.cached_calls + other.cached_calls,
            repaired=self.repaired + other.repaired,
            unparsed=self.unparsed + other.unparsed,
        )

    def as_metadata(self) -> dict[str, Any]:
        """The shape every judge result carries in ``metadata["usage"]``."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost_usd,
            "cached": self.cached,
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "repaired": self.repaired,
            "unparsed": self.unparsed,
        }


class UsageMeter:
    """Accumulates the usage of the calls made for one result (concurrent calls included),
    and keeps the last exchange with the model (``assay.llm.transcript``)."""

    def __init__(self) -> None:
        self.total = Usage()
        self.last: Exchange | None = None
        self.secrets: tuple[str, ...] = ()

    def add(self, usage: Usage) -> None:
        self.total = self.total + usage

    def record(self, exchange: Exchange, secrets: tuple[str, ...] = ()) -> None:
        self.last, self.secrets = exchange, secrets

    def transcript(self) -> dict[str, Any] | None:
        """The last exchange, bounded and scrubbed, as a result's metadata keeps it."""
        return None if self.last is None else bounded(self.last, self.secrets)
