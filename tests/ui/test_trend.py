"""A metric across a dataset's experiments: means with intervals in time order, and a
significant change from the previous experiment marked by the paired comparison."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient
from ui_testdata import T0, RowSpec, make_dataset, make_experiment

from assay.store import Store
from assay.store.read.database import ReadOnlyDatabase
from assay.ui import create_app
from assay.ui.trend.series import trends

N = 40


def test_a_regression_is_marked_against_the_experiment_before(store: Store) -> None:
    dataset, examples = make_dataset(store, "trend", [{"inputs": {"q": i}} for i in range(N)])
    passing = [RowSpec(outputs={"a": i}, scores={"correct": 1}) for i in range(N)]
    for hour, (name, rows) in enumerate(
        [
            ("v1", passing),
            ("v2", [RowSpec(outputs={"a": i}, scores={"correct": int(i != 3)}) for i in range(N)]),
            ("v3", [RowSpec(outputs={"a": i}, scores={"correct": int(i % 4 == 0)}) for i in range(N)]),
        ]
    ):
        make_experiment(store, name, dataset, examples, rows, created=T0 + timedelta(hours=hour))
    db = ReadOnlyDatabase(store)
    try:
        (series,) = trends(db, str(dataset.id))
    finally:
        db.close()
    assert series.key == "correct" and [p.name for p in series.points] == ["v1", "v2", "v3"]
    assert [p.mean for p in series.points] == [1.0, 39 / 40, 10 / 40]
    assert [p.change for p in series.points] == [None, "no detectable difference", "worse"]
    assert all(p.ci_low is not None and p.ci_low <= p.mean <= p.ci_high for p in series.points)  # type: ignore[operator]
    with TestClient(create_app(store), base_url="http://127.0.0.1") as client:
        page = client.get(f"/datasets/{dataset.id}").text
    assert page.count('<circle class="point') == 3 and page.count('<circle class="point worse"') == 1
    assert '<text class="change worse"' in page and '<b class="worse">worse</b>' in page
