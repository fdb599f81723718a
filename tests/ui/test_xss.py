"""Model outputs (and every other stored string) holding HTML or JavaScript show as text
and execute nothing: checked in real Chromium on every page kind, with the page's own
Content-Security-Policy violations counted too, so escaping is what is proven."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page
from ui_testdata import ERROR, LiveServer, RowSpec, make_dataset, make_experiment

from assay.evaluation import EvaluationResult
from assay.schemas import Run
from assay.store import Store, open_store

pytestmark = pytest.mark.slow

SCRIPT = "<script>window.__xss = 'script'; alert('script')</script>"
IMG = "<img src=x onerror=\"window.__xss = 'img'; alert('img')\">"
ATTR = "\" autofocus onfocus=\"window.__xss='attr'"
PAYLOAD = f"{SCRIPT} {IMG} {ATTR}"


def hostile_store(path: str) -> Store:
    store = open_store(path)
    dataset, examples = make_dataset(
        store,
        f"data {IMG}",
        [
            {
                "inputs": {"question": PAYLOAD, SCRIPT: IMG},
                "outputs": {"answer": PAYLOAD},
                "metadata": {"note": IMG},
            }
        ]
        * 2,
    )
    child = Run(
        name=f"step {SCRIPT}", run_type=IMG, inputs={"x": PAYLOAD}, outputs={"y": IMG}, error=f"boom {IMG}"
    )
    good = RowSpec(
        outputs={"answer": PAYLOAD, "html": "<b>bold</b>"},
        scores={f"metric {IMG}": 0.5, "broken": ERROR, "plain": 1},
        metadata={
            f"metric {IMG}": {
                "test_cases_details": [
                    {"input": SCRIPT, "actual_output": IMG, "expected_output": PAYLOAD, "passed": False}
                ],
                "columns": [SCRIPT],
                "rows": [[IMG]],
            }
        },
        children=[child],
    )
    bad = RowSpec(error=f"RuntimeError: {PAYLOAD}", scores={"plain": 0})
    summary = [EvaluationResult(key=f"summary {SCRIPT}", score=0.5, value=IMG, comment=PAYLOAD, feedback=IMG)]
    for name in (f"exp {IMG}", f"exp2 {SCRIPT}"):
        make_experiment(store, name, dataset, examples, [good, bad], summary=summary)
    return store


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    store = hostile_store(str(tmp_path_factory.mktemp("xss") / "xss.db"))
    with LiveServer(store) as live:
        yield live
    store.close()


def page_urls(server: LiveServer) -> list[str]:
    import httpx

    experiments = httpx.get(f"{server.url}/api/experiments").json()["experiments"]
    first, second = experiments[0]["id"], experiments[1]["id"]
    rows = httpx.get(f"{server.url}/api/experiments/{first}/rows").json()["rows"]
    dataset = experiments[0]["dataset_id"]
    return [
        "/experiments",
        f"/experiments/{first}",
        f"/experiments/{first}?failed=1",
        *[f"/experiments/{first}/rows/{row['run_id']}" for row in rows],
        f"/compare?e={first}&e={second}",
        "/compare",
        "/datasets",
        f"/datasets/{dataset}",
        f"/experiments/{first}?metric=nope",  # an error page echoing a parameter
    ]


def test_nothing_executes_and_the_text_shows_literally(browser: Browser, server: LiveServer) -> None:
    context = browser.new_context()
    page: Page = context.new_page()
    dialogs: list[str] = []
    console: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    def on_console(message: ConsoleMessage) -> None:
        console.append(message.text)

    page.on("dialog", on_dialog)
    page.on("console", on_console)
    seen: dict[str, Any] = {}
    for url in page_urls(server):
        page.goto(server.url + url)
        page.wait_for_load_state("load")
        page.keyboard.press("Tab")  # would fire an injected autofocus/onfocus handler
        seen[url] = page.evaluate("window.__xss")
        assert page.locator("img").count() == 0, url
        assert page.locator("main script").count() == 0, url
    assert all(value is None for value in seen.values()), seen
    assert dialogs == []
    assert not [m for m in console if "Content Security Policy" in m], console  # escaping held

    page.goto(server.url + page_urls(server)[3])
    body = page.locator("main").inner_text()
    assert SCRIPT in body and IMG in body
    assert page.locator("#outputs").inner_text().count(SCRIPT) == 1
    assert page.locator("#target-error").count() == 0
    cell = page.locator("article.result table.data td").first
    assert cell.inner_text() == SCRIPT
    context.close()


def test_the_raw_html_holds_only_escaped_payloads(server: LiveServer) -> None:
    import httpx

    for url in page_urls(server):
        html = httpx.get(server.url + url).text
        assert "<script>window.__xss" not in html and "<img src=x" not in html, url
        assert 'autofocus onfocus="' not in html, url
    row_page = httpx.get(server.url + page_urls(server)[3]).text
    assert "&lt;script&gt;window.__xss" in row_page


def test_the_json_api_returns_payloads_as_data(server: LiveServer) -> None:
    import httpx

    response = httpx.get(f"{server.url}/api/experiments")
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-content-type-options"] == "nosniff"
    names = {e["name"] for e in response.json()["experiments"]}
    assert names == {f"exp {IMG}", f"exp2 {SCRIPT}"}
