"""A spending cap on judge calls: ``evaluate(..., max_cost=5.0)``.

While an experiment runs with a budget, every judge call adds its cost (from the model's
price) to it. Once the cap is reached, no new row is started: each remaining row is stored
as a failed run whose error says why (``skipped: judge budget ...``), so a resume with a
higher budget (``resume=True, max_cost=...``) runs exactly those rows again. Judgements of
rows already in flight finish (the overshoot is at most one row per concurrent slot).
A budget needs prices: a judge model without one is an error when it is first called.
It lives below both the evaluation (which stops rows) and the model layer (which spends),
so ``import assay`` does not load the model layer for it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from assay.errors import BudgetExhaustedError

__all__ = ["BudgetExhaustedError", "CostBudget", "current_budget", "use_budget"]


class CostBudget:
    """US dollars a run may spend on judge calls; safe to share across threads."""

    def __init__(self, max_cost: float) -> None:
        if not max_cost > 0:
            raise ValueError(f"max_cost must be a positive number of US dollars, got {max_cost!r}")
        self.max_cost = float(max_cost)
        self.spent = 0.0
        self.calls = 0
        self._lock = threading.Lock()

    def add(self, cost: float | None) -> None:
        with self._lock:
            self.spent += cost or 0.0
            self.calls += 1

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.max_cost

    def check(self) -> None:
        """Raise ``BudgetExhaustedError`` once the cap is reached."""
        if self.exhausted:
            raise BudgetExhaustedError(
                f"skipped: judge budget max_cost=${self.max_cost:g} reached (${self.spent:.4f} spent "
                f"on {self.calls} calls); resume with a higher max_cost to run this row"
            )


_BUDGET: ContextVar[CostBudget | None] = ContextVar("assay_judge_budget", default=None)


def current_budget() -> CostBudget | None:
    return _BUDGET.get()


@contextmanager
def use_budget(budget: CostBudget | None) -> Iterator[CostBudget | None]:
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)
