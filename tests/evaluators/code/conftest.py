"""The code evaluators' tests (assay.evaluators.code); their sandbox fixtures are in
tests/_sandbox_fixtures.py, shared with the sandbox's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _secret_in_environment(secret_in_environment: None) -> None:
    """tests/_sandbox_fixtures.py: a fake API key in our environment that no sandbox may see."""
