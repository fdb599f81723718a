"""The compare page reads the stored metric columns: in real headless Chromium it shows
the same statistics and per-row change counts as the SQL path does once they are gone."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, ViewportSize
from ui_testdata import ERROR, LiveServer, RowSpec, make_dataset, make_experiment

from assay.store import Store, open_store
from assay.store import _columns as columns

pytestmark = pytest.mark.slow
N = 60


@pytest.fixture
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Store]]:
    store: Store = open_store(str(tmp_path_factory.mktemp("columns") / "ui.db"))
    dataset, examples = make_dataset(store, "cols", [{"inputs": {"q": i}} for i in range(N)])
    rng = random.Random(3)
    lower = {"distance": {"direction": "lower"}}

    def rows(shift: float) -> list[RowSpec]:
        return [
            RowSpec(
                outputs={"a": i},
                scores={
                    "correct": rng.random() < 0.6 + shift,
                    "distance": ERROR if rng.random() < 0.1 else rng.random() - shift,
                },
                info=lower,
            )
            for i in range(N)
        ]

    make_experiment(store, "before", dataset, examples, rows(0.0))
    make_experiment(store, "after", dataset, examples, rows(0.2))
    with LiveServer(store) as server:
        yield server, store
    store.close()


@pytest.fixture
def viewport() -> ViewportSize:
    return {"width": 1600, "height": 900}


def _stored_sets(store: Store) -> int:
    return int(store.conn.execute("SELECT COUNT(*) FROM metric_column_sets").fetchone()[0])  # type: ignore[attr-defined]


def test_the_page_from_columns_shows_what_the_sql_path_shows(
    page: Page, served: tuple[LiveServer, Store]
) -> None:
    server, store = served
    assert _stored_sets(store) == 2  # both experiments completed: their columns are stored
    page.goto(f"{server.url}/compare?e=before&e=after")
    from_columns = page.locator("#compare-metrics").inner_text()
    assert "better" in from_columns or "worse" in from_columns  # a real comparison was drawn
    with store.transaction() as conn:  # type: ignore[attr-defined]
        ids = [row[0] for row in conn.execute("SELECT id FROM experiments")]
        columns.invalidate(conn, ids)
    page.goto(f"{server.url}/compare?e=before&e=after")
    from_sql = page.locator("#compare-metrics").inner_text()
    assert _stored_sets(store) == 0  # the page only reads: it took the SQL path
    assert from_columns == from_sql
