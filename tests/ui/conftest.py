"""Fixtures for the UI tests. The builders live in ui_testdata.py, importable by the tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, sync_playwright

sys.path.insert(0, str(Path(__file__).parent))

from ui_testdata import Scenario, build_scenario  # noqa: E402

from assay.store import Store, open_store  # noqa: E402


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(str(tmp_path / "ui.db"))
    yield opened
    opened.close()


@pytest.fixture
def scenario(store: Store) -> Scenario:
    return build_scenario(store)


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's headless Chromium, one per test module (the sync API's loop must not
    outlive the module: other modules run their own asyncio loops)."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def docs_img(tmp_path: Path) -> Path:
    """Where a test saves its screenshots: docs/img/ when refreshing the docs' images
    (ASSAY_DOCS_SCREENSHOTS=docs/img), else the test's own temporary folder (a test run
    leaves neither the repository nor /tmp with anything of its own)."""
    return Path(os.environ.get("ASSAY_DOCS_SCREENSHOTS") or tmp_path)


@pytest.fixture
def viewport() -> ViewportSize:
    return {"width": 1400, "height": 900}


@pytest.fixture
def page(browser: Browser, viewport: ViewportSize) -> Iterator[Page]:
    """A fresh context per test; a script error on any page fails the test."""
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(10_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == []
