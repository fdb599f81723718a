"""Per-metric failing thresholds on the experiment page, in real headless Chromium: the
defaults, typing a threshold, clearing a 0/1 metric's default, direction, and the URL
that keeps them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect
from ui_testdata import LiveServer, RowSpec, make_dataset, make_experiment

from assay.store import Store, open_store

pytestmark = pytest.mark.slow
LOWER = {"direction": "lower"}
# per row: ok (0/1, higher better), leaked (0/1, lower better), similarity, distance (lower)
ROWS = [
    (1, 0, 0.95, 0.10),
    (0, 0, 0.99, 0.05),  # ok at its worst value
    (1, 1, 0.90, 0.20),  # leaked at its worst value (1, lower is better)
    (1, 0, 0.40, 0.70),  # poor similarity and distance: continuous, no default failure
    (1, 0, 1.00, 0.00),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    store: Store = open_store(str(tmp_path_factory.mktemp("thresholds") / "ui.db"))
    dataset, examples = make_dataset(store, "t", [{"inputs": {"i": i}} for i in range(len(ROWS))])
    specs = [
        RowSpec(
            outputs={"o": i},
            scores={"ok": ok, "leaked": leaked, "similarity": sim, "distance": dist},
            info={"leaked": LOWER, "distance": LOWER},
        )
        for i, (ok, leaked, sim, dist) in enumerate(ROWS)
    ]
    make_experiment(store, "exp", dataset, examples, specs)
    with LiveServer(store) as server:
        yield server
    store.close()


def row_numbers(page: Page) -> list[int]:
    return [int(text.split(".")[0]) for text in page.locator("#row-table tbody a.row-link").all_inner_texts()]


def threshold(page: Page, key: str) -> object:
    return page.locator(f"#metrics tr[data-metric={key}] input[data-threshold]")


def query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query, keep_blank_values=True)


def test_set_clear_and_keep_thresholds_per_metric(page: Page, served: LiveServer) -> None:
    page.goto(f"{served.url}/experiments/exp")
    # Defaults: a 0/1 metric fails at its worst value, a continuous one never.
    expect(threshold(page, "ok")).to_have_value("0")
    expect(threshold(page, "leaked")).to_have_value("1")
    expect(threshold(page, "similarity")).to_have_value("")
    expect(threshold(page, "distance")).to_have_value("")
    expect(page.locator("#metrics tr[data-metric=distance] td.threshold")).to_contain_text("or above")
    page.locator("#filter-failed").check()
    page.wait_for_url(re.compile(r"failed=1"))
    assert row_numbers(page) == [2, 3]
    assert not any(name.startswith("fail.") for name in query(page))  # defaults stay out of the URL

    threshold(page, "similarity").fill("0.5")  # at or below 0.5 fails
    threshold(page, "similarity").press("Enter")
    page.wait_for_url(re.compile(r"fail\.similarity=0\.5"))
    assert row_numbers(page) == [2, 3, 4]
    assert "fail.ok" not in query(page) and query(page)["failed"] == ["1"]

    threshold(page, "leaked").fill("")  # clearing a 0/1 metric's default: it never fails
    threshold(page, "leaked").press("Enter")
    page.wait_for_url(re.compile(r"fail\.leaked=(&|$)"))
    assert row_numbers(page) == [2, 4]

    threshold(page, "distance").fill("0.1")  # lower is better: at or above 0.1 fails
    threshold(page, "distance").press("Enter")
    page.wait_for_url(re.compile(r"fail\.distance=0\.1"))
    assert row_numbers(page) == [1, 2, 3, 4]

    # The URL keeps them: a reload and a sort show the same inputs and rows.
    page.reload()
    expect(threshold(page, "similarity")).to_have_value("0.5")
    expect(threshold(page, "leaked")).to_have_value("")
    expect(threshold(page, "distance")).to_have_value("0.1")
    page.locator("#row-table thead").get_by_role("link", name="similarity").click()
    page.wait_for_url(re.compile(r"sort=metric"))
    assert sorted(row_numbers(page)) == [1, 2, 3, 4] and row_numbers(page)[0] == 4  # 0.40 first
    assert query(page)["fail.distance"] == ["0.1"]


def test_a_threshold_alone_checks_failed_rows_only(page: Page, served: LiveServer) -> None:
    page.goto(f"{served.url}/experiments/exp")
    expect(page.locator("#filter-failed")).not_to_be_checked()
    threshold(page, "similarity").fill("0.95")
    threshold(page, "similarity").press("Enter")
    page.wait_for_url(re.compile(r"failed=1"))
    assert row_numbers(page) == [1, 2, 3, 4]  # 0.95, ok=0, 0.90 and leaked, 0.40


def test_a_bad_threshold_is_refused_with_its_name(page: Page, served: LiveServer) -> None:
    answer = page.goto(f"{served.url}/experiments/exp?failed=1&fail.nope=0.5")
    assert answer is not None and answer.status == 400
    expect(page.locator("body")).to_contain_text("unknown metric 'nope'")
    answer = page.goto(f"{served.url}/experiments/exp?failed=1&fail.similarity=abc")
    assert answer is not None and answer.status == 400
    expect(page.locator("body")).to_contain_text("'fail.similarity' must be a number")
