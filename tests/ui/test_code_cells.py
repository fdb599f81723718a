"""Code and multi-line text: lines kept in every table (collapsed to the first line, a
click expands), code highlighted by language on the row page (Pygments, escaped), and
the vendored token colours current. The browser part runs in real Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Page, expect
from ui_testdata import LiveServer, RowSpec, make_dataset, make_experiment

from assay.store import Store, open_store
from assay.ui import create_app
from assay.ui.app import STATIC
from assay.ui.reading.code import code_of, stylesheet

PROGRAM = 'def solution(n):\n    if n % 15 == 0:\n        return "<FizzBuzz>"\n    return str(n)'
FENCED = f"```python\n{PROGRAM}\n```"


def stored(store: Store) -> tuple[str, str]:
    dataset, examples = make_dataset(store, "code", [{"inputs": {"task": f"task {i}"}} for i in range(3)])
    rows = [
        RowSpec(outputs={"answer": FENCED}),
        RowSpec(outputs={"code": PROGRAM, "note": "one line"}),
        RowSpec(outputs={"answer": "plain prose on one line"}),
    ]
    experiment = make_experiment(store, "coded", dataset, examples, rows)
    runs = [row.run.id for row in store.load_rows(experiment)]
    return str(experiment.id), str(runs[0])


def test_code_is_told_by_a_fence_or_its_key_never_guessed_from_prose() -> None:
    assert code_of(FENCED) is not None and code_of(FENCED).language == "python"  # type: ignore[union-attr]
    assert code_of("```sql\nSELECT 1\n```").language == "sql"  # type: ignore[union-attr]
    assert code_of(PROGRAM, "code") is not None and code_of(PROGRAM, "answer") is None
    assert code_of("It was fine.\nReally, it was.", "solution") is None  # prose does not parse
    assert code_of("```nosuchlanguage\nx\n```") is None
    assert code_of("SELECT *\nFROM t", "sql") is not None


def test_tables_keep_lines_and_the_row_page_highlights_escaped(store: Store) -> None:
    experiment, run = stored(store)
    with TestClient(create_app(store), base_url="http://127.0.0.1") as client:
        table = client.get(f"/experiments/{experiment}").text
        row = client.get(f"/experiments/{experiment}/rows/{run}").text
        api = client.get(f"/api/experiments/{experiment}/rows").json()["rows"]
    assert '<details class="lines"><summary><span class="first-line">```python</span>' in table
    assert (
        "    if n % 15 == 0:\n        return &#34;&lt;FizzBuzz&gt;&#34;" in table
    )  # lines and indents kept, escaped
    assert (
        "plain prose on one line" in table and table.count('<details class="lines">') == 1
    )  # one multi-line preview
    assert api[0]["outputs"] == FENCED  # the API's preview keeps the lines too
    assert '<pre class="block code hl" data-language="python"><span class="k">def</span>' in row
    assert '<span class="s2">&#34;&lt;FizzBuzz&gt;&#34;</span>' in row or "&lt;FizzBuzz&gt;" in row
    assert "<FizzBuzz>" not in row and "<FizzBuzz>" not in table
    assert '<link rel="stylesheet" href="/static/highlight.css">' in row


def test_the_vendored_colours_are_pygments_current_ones() -> None:
    css = (STATIC / "highlight.css").read_text()
    assert css.split("\n", 1)[1] == stylesheet()
    assert "http" not in css  # nothing fetched from elsewhere


@pytest.mark.slow
def test_a_collapsed_cell_expands_on_click_without_opening_the_row(page: Page, tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "code.db"))
    experiment, _ = stored(store)
    with LiveServer(store) as server:
        page.goto(f"{server.url}/experiments/{experiment}")
        cell = page.locator("#row-table tbody tr").first.locator("td.output details.lines")
        expect(cell.locator("pre.lines-body")).to_be_hidden()
        expect(cell.locator("summary")).to_contain_text("+5 lines")
        cell.locator("summary").click()
        expect(cell.locator("pre.lines-body")).to_be_visible()
        expect(cell.locator("pre.lines-body")).to_contain_text(
            '    if n % 15 == 0:\n        return "<FizzBuzz>"'
        )
        assert page.url.endswith(f"/experiments/{experiment}")  # the click expanded, it did not navigate
        page.locator("#row-table tbody tr").first.locator("a.row-link").click()
        code = page.locator("#outputs pre.code.hl")
        expect(code).to_have_attribute("data-language", "python")
        expect(code.locator("span.k").first).to_have_text("def")
        color = code.locator("span.k").first.evaluate("node => getComputedStyle(node).color")
        assert color == "rgb(0, 128, 0)"  # the vendored stylesheet's keyword colour applies
    store.close()
