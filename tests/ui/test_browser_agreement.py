"""The judge-against-people panel of the experiment page, in real headless Chromium
against a real uvicorn server: a key both an evaluator and people scored is compared by
itself (kappa equal to scikit-learn's on the same rows), another pair is picked in the
form, and people's labels alone (no shared key) show only the picker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from sklearn.metrics import cohen_kappa_score
from ui_testdata import LiveServer, Scenario, build_scenario

from assay import Client
from assay.store import Store, open_store

pytestmark = pytest.mark.slow

FLIPPED = {1, 2, 5}  # rows where people disagree with the evaluator


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, Scenario]]:
    store: Store = open_store(str(tmp_path / "ui.db"))
    scenario = build_scenario(store)
    with LiveServer(store) as server:
        yield server, scenario
    store.close()


def label_correct(scenario: Scenario) -> tuple[list[int], list[int]]:
    """People score ``correct`` on 8 rows, disagreeing on 3: (judge's, people's) labels."""
    client = Client(store=scenario.store)
    judge, human = [], []
    for i, row in enumerate(scenario.store.load_rows(scenario.baseline)[:8]):
        stored = next(int(r.score) for r in row.results if r.key == "correct" and r.score is not None)
        given = 1 - stored if i in FLIPPED else stored
        client.create_feedback(
            row.run.id, "correct", score=given, feedback_source_type="human", source_info={"annotator": "Ann"}
        )
        judge.append(stored)
        human.append(given)
    return judge, human


def test_the_shared_key_is_compared_and_another_pair_is_picked(
    docs_img: Path, page: Page, served: tuple[LiveServer, Scenario]
) -> None:
    server, scenario = served
    judge, human = label_correct(scenario)
    page.goto(f"{server.url}/experiments/baseline")
    row = page.locator("#agreement-table tr[data-judge=correct][data-human=correct] td")
    expect(row.nth(3)).to_have_text("8")
    expect(row.nth(4)).to_contain_text("0.625")  # 5 of 8 agree
    kappa = float(row.nth(5).locator("b").inner_text())
    assert kappa == pytest.approx(cohen_kappa_score(judge, human), abs=5e-4)
    assert "[" in row.nth(5).inner_text()  # with its interval
    page.locator("#judge-agreement").screenshot(path=str(docs_img / "ui-agreement.png"))

    page.locator("#agreement-judge").select_option("quality")
    page.locator("#agreement-human").select_option("correct")
    page.locator("#agreement-go").click()
    first = page.locator("#agreement-table tbody tr").first
    expect(first).to_have_attribute("data-judge", "quality")
    expect(first.locator("td").nth(3)).to_have_text("8")
    assert "judge=quality" in page.url


def test_labels_on_a_key_no_evaluator_has_offer_the_picker_only(
    page: Page, served: tuple[LiveServer, Scenario]
) -> None:
    server, scenario = served
    run = scenario.store.load_rows(scenario.baseline)[0].run.id
    Client(store=scenario.store).create_feedback(
        run, "human", score=1, value="up", feedback_source_type="human", source_info={"annotator": "Ann"}
    )
    page.goto(f"{server.url}/experiments/baseline")
    expect(page.locator("#agreement-pick")).to_be_visible()
    expect(page.locator("#agreement-table")).to_have_count(0)
    page.locator("#agreement-judge").select_option("correct")
    page.locator("#agreement-go").click()
    expect(page.locator("#agreement-table tr[data-judge=correct][data-human=human] td").nth(3)).to_have_text(
        "1"
    )
