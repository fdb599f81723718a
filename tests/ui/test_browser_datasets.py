"""Growing a dataset in real headless Chromium: fix a wrong reference, add a failing row
with its correction, upload a file picked from disk (a bad line named first)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from ui_testdata import LiveServer, Scenario, build_scenario

from assay.store import Store, open_store

pytestmark = pytest.mark.slow


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, Scenario]]:
    store: Store = open_store(str(tmp_path / "ui.db"))
    scenario = build_scenario(store)
    with LiveServer(store) as server:
        yield server, scenario
    store.close()


def references(scenario: Scenario) -> list[object]:
    return [e.outputs for e in scenario.store.list_examples(scenario.dataset.id)]


def test_fix_a_reference_add_a_failing_row_and_upload(
    docs_img: Path, page: Page, served: tuple[LiveServer, Scenario], tmp_path: Path
) -> None:
    server, scenario = served
    page.goto(f"{server.url}/datasets/qa")
    page.locator("#examples tbody tr").nth(3).get_by_role("link", name="edit").click()
    page.locator("#edit-outputs").fill('{"answer": "answer 3, checked"}')
    page.screenshot(
        path=str(docs_img / "ui-dataset-edit.png"), clip={"x": 0, "y": 0, "width": 1400, "height": 560}
    )
    page.locator("#save-example").click()
    expect(page.locator("#dataset-done")).to_contain_text("edited an example, making version v2")
    assert references(scenario)[3] == {"answer": "answer 3, checked"}

    page.goto(f"{server.url}/experiments/baseline?failed=1")
    page.locator("#row-table tbody tr").first.locator("td.output").click()  # row 2: "wrong 1"
    page.locator("#annotator").fill("Ann")
    page.locator("#correction").fill("answer 1")
    page.locator("#save-feedback").click()
    expect(page.locator("#correction")).to_have_value("answer 1")
    page.locator("#to-dataset-name").select_option(label="qa")
    page.locator("#to-dataset-button").click()
    expect(page.locator("#dataset-done")).to_contain_text("added the row, making version v3")
    assert references(scenario)[-1] == {"answer": "answer 1"}

    bad = tmp_path / "more.jsonl"
    bad.write_text('{"inputs": {"question": "q"}}\n{"inputs": ["not", "an object"]}\n', encoding="utf-8")
    page.locator("#grow-dataset summary").click()
    page.locator("#upload-file").set_input_files(str(bad))
    expect(page.locator("#upload-content")).to_have_value(bad.read_text(encoding="utf-8"))
    page.locator("#upload-button").click()
    expect(page.locator(".error-message")).to_contain_text("more.jsonl:2: 'inputs' must be an object")
    expect(page.locator(".error-message")).to_contain_text("nothing was stored")
    assert len(references(scenario)) == 13

    good = tmp_path / "more.csv"
    good.write_text("question,outputs.answer\nq1,a1\nq2,a2\n", encoding="utf-8")
    page.go_back()
    page.locator("#grow-dataset summary").click()
    page.locator("#upload-file").set_input_files(str(good))
    expect(page.locator("#upload-format")).to_have_value("csv")
    page.locator("#upload-button").click()
    expect(page.locator("#dataset-done")).to_contain_text("uploaded 2 examples, making version v4")
    assert references(scenario)[-2:] == [{"answer": "a1"}, {"answer": "a2"}]
    page.locator("#dataset-version").select_option("2")  # the fixed reference's version stays readable
    page.wait_for_url("**version=2**")
    expect(page.locator("#examples tbody tr").nth(3)).to_contain_text("answer 3, checked")


def test_a_metrics_trend_marks_the_regression(docs_img: Path, page: Page, tmp_path: Path) -> None:
    from datetime import timedelta

    from ui_testdata import T0, RowSpec, make_dataset, make_experiment

    store: Store = open_store(str(tmp_path / "trend.db"))
    dataset, examples = make_dataset(store, "releases", [{"inputs": {"q": i}} for i in range(40)])
    for hour, passed in enumerate([40, 39, 38, 12, 30]):
        rows = [
            RowSpec(
                outputs={"a": i}, scores={"correct": int(i < passed), "quality": 0.9 if i < passed else 0.2}
            )
            for i in range(40)
        ]
        make_experiment(
            store, f"release-{hour + 1}", dataset, examples, rows, created=T0 + timedelta(hours=hour)
        )
    with LiveServer(store) as server:
        page.goto(f"{server.url}/datasets")
        page.get_by_role("link", name="releases").click()
        chart = page.locator("figure.trend[data-metric=correct]")
        expect(chart.locator("circle.point")).to_have_count(5)
        expect(chart.locator("circle.worse")).to_have_count(1)
        expect(chart.locator("circle.better")).to_have_count(1)
        expect(chart.locator("li").nth(3)).to_contain_text("release-4")
        expect(chart.locator("li").nth(3)).to_contain_text("worse")
        page.locator("#trends").screenshot(path=str(docs_img / "ui-trend.png"))
    store.close()
