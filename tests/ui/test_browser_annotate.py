"""People labelling in real headless Chromium against a real uvicorn server: a queue
walked with the keyboard, a row labelled and corrected with clicks, the human metric
on the experiment page, a cross-site form refused, and --read-only with no form at all.
Screenshots for docs/ui.md: ASSAY_DOCS_SCREENSHOTS=docs/img refreshes docs/img/."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from ui_testdata import LiveServer, Scenario, build_scenario, free_port

from assay.store import Store, open_store

pytestmark = pytest.mark.slow


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, Scenario]]:
    store: Store = open_store(str(tmp_path / "ui.db"))
    scenario = build_scenario(store)
    with LiveServer(store) as server:
        yield server, scenario
    store.close()


def human(store: Store) -> list[tuple[str, str, object]]:
    return [
        (f.feedback_source["metadata"]["annotator"], f.key, f.value)  # type: ignore[index]
        for f in store.list_feedback()
        if (f.feedback_source or {}).get("type") == "human"
    ]


def test_label_a_queue_with_the_keyboard(
    docs_img: Path, page: Page, served: tuple[LiveServer, Scenario]
) -> None:
    server, scenario = served
    page.goto(f"{server.url}/experiments")
    page.get_by_role("link", name="Label").click()
    page.locator("#queue-annotator").fill("Ann")
    page.get_by_label("queue baseline").check()
    page.locator("input[name=rule][value=random]").check()
    page.locator("#queue-n").fill("5")
    page.locator("#queue-seed").fill("1")
    page.locator("#queue-go").click()
    expect(page.locator("#queue-count")).to_have_text("0 of 5 labelled")
    first = page.locator("#inputs").inner_text()

    page.keyboard.press("1")  # thumbs up, saved, and the next row appears
    expect(page.locator("#queue-count")).to_have_text("1 of 5 labelled")
    assert page.locator("#inputs").inner_text() != first
    page.keyboard.press("2")  # thumbs down
    expect(page.locator("#queue-count")).to_have_text("2 of 5 labelled")
    page.keyboard.press("s")  # skipped: done, but no label
    expect(page.locator("#queue-count")).to_have_text("3 of 5 labelled")
    expect(page.locator("#queue-progress")).to_contain_text("row 4 of 5")
    page.keyboard.press("ArrowLeft")  # back to the skipped row, nothing saved
    expect(page.locator("#queue-progress")).to_contain_text("row 3 of 5")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#queue-progress")).to_contain_text("row 4 of 5")
    page.locator("#comment").fill("the answer is right but rude")  # typing never triggers a shortcut
    expect(page.locator("#queue-count")).to_have_text("3 of 5 labelled")
    page.screenshot(path=str(docs_img / "ui-queue.png"))
    assert sorted(human(scenario.store)) == [
        ("Ann", "human", "down"),
        ("Ann", "human", "up"),
        ("Ann", "skipped", None),
    ]

    page.reload()  # the position is read back from the store
    expect(page.locator("#queue-progress")).to_contain_text("row 4 of 5")


def test_label_and_correct_a_row_then_see_the_human_metric(
    docs_img: Path, page: Page, served: tuple[LiveServer, Scenario]
) -> None:
    server, scenario = served
    page.goto(f"{server.url}/experiments/baseline")
    page.locator("#row-table tbody tr").nth(1).locator("td.output").click()
    expect(page.locator("h1")).to_have_text("Row 2")
    page.locator("#annotator").fill("Ben")
    page.locator("fieldset[data-key=human]").get_by_label("down").check()
    page.locator("#comment").fill("wrong: the answer is 'answer 1'")
    page.locator("#correction").fill("answer 1")
    page.locator("#save-feedback").click()
    expect(page.locator("fieldset[data-key=human] input[value=down]")).to_be_checked()
    expect(page.locator("#annotator")).to_have_value("Ben")  # remembered for the next row
    expect(page.locator("#correction")).to_have_value("answer 1")

    page.get_by_role("link", name="next ›").click()
    expect(page.locator("h1")).to_have_text("Row 3")
    expect(page.locator("#annotator")).to_have_value("Ben")
    page.locator("fieldset[data-key=human]").get_by_label("up").check()
    page.locator("#save-feedback").click()
    expect(page.locator("fieldset[data-key=human] input[value=up]")).to_be_checked()

    page.goto(f"{server.url}/experiments/baseline")
    metric = page.locator("#human-metrics tr[data-human=human] td")
    expect(metric.nth(1)).to_have_text("0.5")
    expect(metric.nth(2)).to_contain_text("Wilson")
    expect(page.locator("#row-table tbody tr").nth(1).locator(".human-cell")).to_have_text("human: 0")
    expect(page.locator("#row-table tbody tr").nth(2).locator(".human-cell")).to_have_text("human: 1")
    page.locator("#human-metrics").screenshot(path=str(docs_img / "ui-human-metric.png"))
    notes = [f for f in scenario.store.list_feedback(keys=["note"])]
    assert [(n.comment, n.correction) for n in notes] == [
        ("wrong: the answer is 'answer 1'", {"answer": "answer 1"})
    ]


class _Attacker(BaseHTTPRequestHandler):
    """Another site: its page auto-submits a form to the UI's write."""

    target = ""

    def do_GET(self) -> None:  # noqa: N802 - the handler's name
        body = (
            f'<form id="f" method="post" action="{self.target}">'
            '<input name="annotator" value="Mallory"><input name="key.human" value="up">'
            '<input name="csrf" value="guess"></form>'
            '<script>document.getElementById("f").submit()</script>'
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_form_on_another_site_cannot_write(browser: Browser, served: tuple[LiveServer, Scenario]) -> None:
    server, scenario = served
    run = scenario.store.load_rows(scenario.baseline)[0].run.id
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{server.url}/experiments/baseline/rows/{run}")  # the victim has a session
    _Attacker.target = f"{server.url}/experiments/baseline/rows/{run}/feedback"
    attacker = ThreadingHTTPServer(("127.0.0.1", free_port()), _Attacker)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        with page.expect_response(re.compile(r"/feedback$")) as answer:
            page.goto(f"http://localhost:{attacker.server_address[1]}/")
        assert answer.value.status == 403
    finally:
        attacker.shutdown()
        attacker.server_close()
        context.close()
    assert human(scenario.store) == []


def test_read_only_shows_no_form_and_refuses_a_script_write(
    page: Page, served: tuple[LiveServer, Scenario]
) -> None:
    _, scenario = served
    run = scenario.store.load_rows(scenario.baseline)[0].run.id
    with LiveServer(scenario.store, read_only=True) as reader:
        page.goto(f"{reader.url}/experiments/baseline/rows/{run}")
        expect(page.locator("#read-only-note")).to_be_visible()
        expect(page.locator("#annotate")).to_have_count(0)
        status = page.evaluate(
            """async (url) => (await fetch(url, {method: "POST", body: new URLSearchParams(
                   {annotator: "A", "key.human": "up"})})).status""",
            f"{reader.url}/experiments/baseline/rows/{run}/feedback",
        )
        assert status == 405
    assert human(scenario.store) == []


def test_a_queue_shows_its_next_row_without_a_page_load(
    page: Page, served: tuple[LiveServer, Scenario]
) -> None:
    """A save swaps the next row in (the same POST and redirect, followed by fetch); the
    address follows, Back shows the row before, and a refused save shows the refusal."""
    server, scenario = served
    page.goto(f"{server.url}/queue?e=baseline&annotator=Cy&rule=all")
    expect(page.locator("#queue-progress")).to_contain_text("row 1 of")
    page.evaluate("window.loadedOnce = true")

    page.keyboard.press("1")
    expect(page.locator("#queue-count")).to_contain_text("1 of")
    page.keyboard.press("2")
    expect(page.locator("#queue-progress")).to_contain_text("row 3 of")
    assert page.evaluate("window.loadedOnce") is True  # the same document: no full page load
    assert page.url.endswith("&at=2")
    assert sorted(human(scenario.store)) == [("Cy", "human", "down"), ("Cy", "human", "up")]

    page.go_back()
    expect(page.locator("#queue-progress")).to_contain_text("row 2 of")
    expect(page.locator("fieldset[data-key=human] input[value=down]")).to_be_checked()

    page.locator("#annotate input[name=csrf]").evaluate("field => { field.value = 'stale'; }")
    page.keyboard.press("1")
    expect(page.locator("body")).to_contain_text("this form's token does not match")
    assert sorted(human(scenario.store)) == [("Cy", "human", "down"), ("Cy", "human", "up")]
