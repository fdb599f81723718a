"""End to end in real headless Chromium against a real uvicorn server on 127.0.0.1:
open an experiment, filter failures, open a row, compare two experiments."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from ui_testdata import BASELINE_FAILED, REGRESSIONS, LiveServer, Scenario, build_scenario

from assay.store import Store, open_store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Scenario]]:
    store: Store = open_store(str(tmp_path_factory.mktemp("browser") / "ui.db"))
    scenario = build_scenario(store)
    with LiveServer(store) as server:
        yield server, scenario
    store.close()


def row_numbers(page: Page) -> list[int]:
    return [int(text.split(".")[0]) for text in page.locator("#row-table tbody a.row-link").all_inner_texts()]


def test_open_an_experiment_filter_failures_and_open_a_row(
    page: Page, served: tuple[LiveServer, Scenario]
) -> None:
    server, _ = served
    page.goto(f"{server.url}/experiments")
    page.get_by_role("link", name="baseline", exact=True).click()
    expect(page.locator("#experiment-name")).to_have_text("baseline")
    metrics = page.locator("#metrics tbody tr")
    expect(metrics).to_have_count(3)
    expect(metrics.nth(0)).to_contain_text("correct")
    expect(metrics.nth(0).locator("td").nth(1)).to_have_text("0.5")
    expect(page.locator("#metrics tr[data-metric=judge] td").nth(5)).to_have_text("1")  # one error
    expect(page.locator("figure.histogram")).to_have_count(3)
    expect(page.locator("#summary-results")).to_contain_text("pass_rate")
    assert row_numbers(page) == list(range(1, 13))

    page.locator("#filter-failed").check()  # applies at once (no button press)
    page.wait_for_url(re.compile(r"failed=1"))
    assert row_numbers(page) == [p + 1 for p in BASELINE_FAILED]
    expect(page.locator(".pager")).to_contain_text(f"{len(BASELINE_FAILED)} rows")

    page.locator("#row-table tbody tr", has_text="question 4").locator("td.output").click()
    expect(page.locator("h1")).to_have_text("Row 5")
    judge = page.locator("article.result[data-key=judge]")
    expect(judge.locator(".score")).to_have_text("error")
    expect(judge.locator("pre.traceback")).to_contain_text("ValueError: judge broke")
    expect(page.locator("#reference")).to_contain_text("answer 4")

    page.keyboard.press("ArrowLeft")  # previous row: the code evaluator's test cases
    expect(page.locator("h1")).to_have_text("Row 4")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("h1")).to_have_text("Row 3")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("h1")).to_have_text("Row 2")
    cases = page.locator("article.result[data-key=correct] table.data")
    expect(cases.locator("thead th")).to_have_text(
        ["test_case_index", "input", "expected_output", "actual_output", "execution_success", "error_message"]
    )
    expect(cases.locator("tbody tr.row-bad")).to_have_count(2)
    expect(cases.locator("tbody tr.row-good")).to_have_count(1)


def test_metric_threshold_sort_and_trace(page: Page, served: tuple[LiveServer, Scenario]) -> None:
    server, _ = served
    page.goto(f"{server.url}/experiments/baseline")
    page.locator("#filter-metric").select_option("quality")
    page.wait_for_url(re.compile(r"metric=quality"))
    page.locator("#filter-below").fill("0.6")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r"below=0.6"))
    assert row_numbers(page) == [2, 4, 6, 8, 10, 12]
    assert "sort=" in page.url and "q=" not in page.url  # empty fields stay out of the URL

    page.goto(f"{server.url}/experiments/baseline")
    page.locator("#row-table thead").get_by_role("link", name="correct").click()
    page.locator("#row-table thead").get_by_role("link", name="correct▲").click()
    page.wait_for_url(re.compile(r"order=desc"))
    assert row_numbers(page) == [1, 3, 5, 7, 9, 11, 2, 4, 6, 8, 10, 12]

    page.locator("#row-table tbody tr").first.locator("td.text").first.click()
    expect(page.locator("#trace li.run")).to_have_count(4)
    expect(page.locator("#trace")).to_contain_text("tokenize")
    expect(page.locator("#trace svg.timeline")).to_have_count(4)


def test_compare_two_experiments(page: Page, served: tuple[LiveServer, Scenario]) -> None:
    server, _ = served
    page.goto(f"{server.url}/experiments")
    compare = page.get_by_role("button", name="Compare selected")
    expect(compare).to_be_disabled()
    page.get_by_label("compare baseline").check()  # checked first: the baseline
    page.get_by_label("compare candidate").check()
    expect(compare).to_be_enabled()
    compare.click()
    page.wait_for_url(re.compile(r"/compare\?e="))
    expect(page.locator("#compared tbody tr").first).to_contain_text("baseline")
    correct = page.locator("#compare-metrics tr[data-metric=correct] td")
    expect(correct.nth(1)).to_have_text("0.5")
    expect(correct.nth(3)).to_contain_text("+0.083")
    expect(correct.nth(6)).to_have_text("no detectable difference")  # 12 rows: too few to tell
    expect(correct.nth(7)).to_have_text("1 ▼ / 2 ▲")

    page.locator("#compare-show").select_option("regressions")
    page.wait_for_url(re.compile(r"show=regressions"))
    rows = page.locator("#compare-rows tbody tr")
    expect(rows).to_have_count(len(REGRESSIONS))
    assert [int(t) for t in rows.locator("td:first-child").all_inner_texts()] == [p + 1 for p in REGRESSIONS]
    expect(page.locator("#compare-rows tbody tr.change-regressed")).to_have_count(len(REGRESSIONS))
    first = rows.first.locator("td.cell").nth(1)
    expect(first.locator(".ch-regressed")).to_contain_text("correct")
    expect(rows.nth(3)).to_contain_text("RuntimeError: rate limited")

    page.locator("#compare-metrics tr[data-metric=judge]").get_by_role("link", name="1 ▲").click()
    expect(page.locator("#compare-rows tbody tr")).to_have_count(1)
    expect(page.locator("#compare-rows tbody tr.change-improved")).to_contain_text("question 4")


def test_datasets_and_examples(page: Page, served: tuple[LiveServer, Scenario]) -> None:
    server, _ = served
    page.goto(f"{server.url}/datasets")
    page.get_by_role("link", name="qa").click()
    expect(page.locator("#examples tbody tr")).to_have_count(12)
    page.get_by_placeholder("inputs, outputs, metadata or an id").fill("answer 1")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#examples tbody tr")).to_have_count(3)


def test_a_token_protected_ui_in_the_browser(browser: Browser, served: tuple[LiveServer, Scenario]) -> None:
    _, scenario = served
    token = "browser-token-5678"
    with LiveServer(scenario.store, token=token) as guarded:
        stranger = browser.new_context()
        response = stranger.new_page().goto(f"{guarded.url}/experiments")
        assert response is not None and response.status == 401
        stranger.close()

        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{guarded.url}/?token={token}")
        page.wait_for_url(f"{guarded.url}/experiments")  # the token left the address bar
        page.get_by_role("link", name="baseline", exact=True).click()
        expect(page.locator("#experiment-name")).to_have_text("baseline")
        expect(page.locator("#row-table tbody tr")).to_have_count(12)  # CSS and JS load too
        assert page.evaluate("getComputedStyle(document.body).fontSize") == "14px"
        cookies = context.cookies()  # the token's session, and the CSRF session of the UI's forms
        assert sorted(c["name"] for c in cookies) == ["assay_ui_csrf", "assay_ui_session"]
        assert all(c["httpOnly"] and c["sameSite"] == "Strict" and token not in c["value"] for c in cookies)
        context.close()
