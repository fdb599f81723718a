"""The compare page's paired statistics in real headless Chromium: verdicts read with each
metric's direction, intervals with their method, exact equality, and per-row changes."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, ViewportSize, expect
from ui_testdata import LiveServer, RowSpec, make_dataset, make_experiment

from assay.store import Store, open_store

pytestmark = pytest.mark.slow
N = 80


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    store: Store = open_store(str(tmp_path_factory.mktemp("paired") / "ui.db"))
    dataset, examples = make_dataset(store, "paired", [{"inputs": {"q": i}} for i in range(N)])
    rng = random.Random(5)
    same = [rng.random() for _ in range(N)]
    lower = {"distance": {"direction": "lower", "score_range": [0, 1]}}

    def rows(correct: list[bool], distance: list[float]) -> list[RowSpec]:
        return [
            RowSpec(
                outputs={"a": i},
                scores={"correct": correct[i], "distance": distance[i], "same": same[i]},
                info=lower,
            )
            for i in range(N)
        ]

    base_correct = [i % 4 != 0 for i in range(N)]  # 0.75
    worse_correct = [ok and i % 3 != 0 for i, ok in enumerate(base_correct)]  # loses a third of them
    base_distance = [0.4 + 0.1 * rng.random() for _ in range(N)]
    make_experiment(store, "before", dataset, examples, rows(base_correct, base_distance))
    make_experiment(
        store,
        "after",
        dataset,
        examples,
        rows(worse_correct, [d - 0.1 + 0.02 * rng.random() for d in base_distance]),
    )
    with LiveServer(store) as server:
        yield server
    store.close()


@pytest.fixture
def viewport() -> ViewportSize:
    return {"width": 1600, "height": 900}  # both experiments' columns side by side


def test_the_compare_page_shows_paired_statistics_and_verdicts(page: Page, served: LiveServer) -> None:
    page.goto(f"{served.url}/compare?e=before&e=after")
    correct = page.locator("#compare-metrics tr[data-metric=correct]")
    expect(correct.locator("[data-verdict]")).to_have_text("worse")
    expect(correct.locator("td[data-stat=difference]")).to_contain_text("-0.2")
    expect(correct.locator("td[data-stat=difference]")).to_contain_text("Newcombe")
    expect(correct.locator("td[data-stat=p]")).to_contain_text("exact McNemar")
    expect(correct.locator("td[data-stat=mde]")).to_contain_text("· 80")
    expect(correct.locator(".verdict-worse")).to_have_count(1)

    # Lower is better: a distance that went down is an improvement, in green.
    distance = page.locator("#compare-metrics tr[data-metric=distance]")
    expect(distance).to_have_attribute("data-direction", "lower")
    expect(distance.locator("[data-verdict]")).to_have_text("better")
    expect(distance.locator("td.delta.up")).to_have_count(1)
    expect(distance.locator("td[data-stat=difference]")).to_contain_text("Student t")

    same = page.locator("#compare-metrics tr[data-metric=same]")
    expect(same.locator("td[data-stat=difference]")).to_contain_text("0 (equal)")
    expect(same.locator("[data-verdict]")).to_have_text("no detectable difference")
    assert "e-16" not in page.locator("#compare-metrics").inner_text()

    # Per-row changes stay visible, and follow the direction: every distance row improved.
    expect(distance.get_by_role("link", name=f"{N} ▲")).to_have_count(1)
    distance.get_by_role("link", name="0 ▼").click()
    page.wait_for_url(re.compile(r"show=regressions"))
    expect(page.locator("#compare-rows tbody tr")).to_have_text(["No rows match."])
    page.goto(f"{served.url}/compare?e=before&e=after&show=regressions&metric=correct")
    expect(page.locator("#compare-rows tbody tr.change-regressed")).to_have_count(20)
