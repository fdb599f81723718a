"""Sorting rows by latency in real headless Chromium against a real uvicorn server, and
paging on through the "next" links, which carry the last row's place (keyset)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page
from test_latency_sort import Key, Spec, build, oracle
from ui_testdata import LiveServer

from assay.store import Store, open_store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[Key, Spec]]]:
    store: Store = open_store(str(tmp_path_factory.mktemp("latency") / "ui.db"))
    specs = build(store)
    with LiveServer(store) as server:
        yield server, specs
    store.close()


def shown(page: Page) -> list[Key]:
    """The rows' (position, repetition), from their "position + 1.repetition" links."""
    texts = page.locator("#row-table tbody a.row-link").all_inner_texts()
    return [(int(number) - 1, int(repetition)) for number, repetition in (t.split(".") for t in texts)]


def test_sort_by_latency_both_ways_and_page_on_by_keyset(
    page: Page, served: tuple[LiveServer, dict[Key, Spec]]
) -> None:
    server, specs = served
    page.goto(f"{server.url}/experiments/exp?per_page=10")
    page.locator("#row-table thead").get_by_role("link", name="ms", exact=True).click()
    page.wait_for_url(re.compile(r"sort=latency&order=asc"))
    ascending = oracle(specs, "latency", descending=False)
    assert shown(page) == ascending[:10]

    page.locator("#row-table thead").get_by_role("link", name="ms▲").click()
    page.wait_for_url(re.compile(r"order=desc"))
    descending = oracle(specs, "latency", descending=True)
    assert shown(page) == descending[:10]
    assert page.locator("#row-table tbody tr").nth(0).locator("td.num").last.inner_text() == "7"

    for start in (10, 20, 30):
        page.get_by_role("link", name="next ›").click()
        page.wait_for_url(re.compile(rf"page={start // 10 + 1}.*after=|after=.*page={start // 10 + 1}"))
        assert shown(page) == descending[start : start + 10]
    assert page.get_by_role("link", name="next ›").count() == 0  # the last page
    assert shown(page)[-1] in {k for k, (latency, _) in specs.items() if latency is None}  # untimed last

    page.get_by_role("link", name="‹ previous").click()
    page.wait_for_url(re.compile(r"page=3"))
    assert "after=" not in page.url
    assert shown(page) == descending[20:30]
