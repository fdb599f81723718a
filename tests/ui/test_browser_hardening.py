"""In real headless Chromium: a row holding lone surrogates renders, an out-of-range page
number shows the 400 page naming the parameter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from test_hardening import SHOWN, store_lone_surrogates
from ui_testdata import LiveServer, build_scenario

from assay.store import Store, open_store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    store: Store = open_store(str(tmp_path_factory.mktemp("browser-hardening") / "ui.db"))
    build_scenario(store)
    odd = store_lone_surrogates(store)
    with LiveServer(store) as server:
        yield server, odd
    store.close()


def test_a_row_holding_lone_surrogates_renders(page: Page, served: tuple[LiveServer, dict[str, str]]) -> None:
    server, odd = served
    answer = page.goto(f"{server.url}/experiments/{odd['experiment']}/rows/{odd['run']}")
    assert answer is not None and answer.status == 200
    expect(page.locator("main")).to_contain_text(SHOWN)
    answer = page.goto(f"{server.url}/experiments/{odd['experiment']}")
    assert answer is not None and answer.status == 200
    expect(page.locator("main")).to_contain_text("lone")
    answer = page.goto(f"{server.url}/datasets/{odd['dataset']}")
    assert answer is not None and answer.status == 200
    expect(page.locator("main")).to_contain_text(SHOWN)


def test_an_out_of_range_page_number_shows_the_error_page(
    page: Page, served: tuple[LiveServer, dict[str, str]]
) -> None:
    server, _ = served
    answer = page.goto(f"{server.url}/experiments/baseline?page=9223372036854775807")
    assert answer is not None and answer.status == 400
    expect(page.locator("body")).to_contain_text("page")
    answer = page.goto(f"{server.url}/experiments/baseline?page=1000000000")
    assert answer is not None and answer.status == 200
    expect(page.locator("#experiment-name")).to_have_text("baseline")
