"""Fixtures of the repository-patch tests (the instance itself is in ``_calc``)."""

from tests.evaluators.patches._calc import calc_example, calc_repo, judge

__all__ = ["calc_example", "calc_repo", "judge"]
