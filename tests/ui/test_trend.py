"""A metric across a dataset's experiments: means with intervals in time order, and a
significant change from the previous experiment marked by the paired comparison."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient
from ui_testdata import T0, RowSpec, make_dataset, make_experiment

from assay import Client, evaluate_existing
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


def test_each_pair_is_compared_once_while_both_stand_still(store: Store, monkeypatch: Any) -> None:
    """The chart keeps each neighbouring pair's verdict: a second view compares nothing, a
    new experiment one new pair, and a re-score (new stored figures) its pairs again."""
    import assay.ui.trend.series as series_module

    compared: list[tuple[str, str]] = []
    real = series_module.paired_statistics

    def counting(db: ReadOnlyDatabase, experiments: Any) -> Any:
        compared.append((experiments[0].name, experiments[1].name))
        return real(db, experiments)

    monkeypatch.setattr(series_module, "paired_statistics", counting)
    dataset, examples = make_dataset(store, "kept", [{"inputs": {"q": i}} for i in range(N)])
    scores = {"v1": lambda i: 1, "v2": lambda i: int(i != 3), "v3": lambda i: int(i % 4 == 0)}
    for hour, (name, score) in enumerate(scores.items()):
        rows = [RowSpec(outputs={"a": i}, scores={"correct": score(i)}) for i in range(N)]
        make_experiment(
            store, name, dataset, examples, rows, created=T0 + timedelta(hours=hour), figures=True
        )
    db = ReadOnlyDatabase(store)
    try:
        first = trends(db, str(dataset.id))
        assert [p.change for p in first[0].points] == [None, "no detectable difference", "worse"]
        assert compared == [("v1", "v2"), ("v2", "v3")]
        assert trends(db, str(dataset.id)) == first and len(compared) == 2  # kept

        rows = [RowSpec(outputs={"a": i}, scores={"correct": 1}) for i in range(N)]
        make_experiment(store, "v4", dataset, examples, rows, created=T0 + timedelta(hours=3), figures=True)
        (line,) = trends(db, str(dataset.id))
        assert compared[2:] == [("v3", "v4")] and line.points[-1].change == "better"

        evaluate_existing(
            "v3",
            evaluators=[lambda outputs: {"key": "correct", "score": 1}],
            client=Client(store=store),
            replace=True,
        )
        (line,) = trends(db, str(dataset.id))
        assert sorted(compared[3:]) == [("v2", "v3"), ("v3", "v4")]  # v3's new figures: its pairs again
        assert [p.mean for p in line.points] == [1.0, 39 / 40, 1.0, 1.0]
        assert [p.change for p in line.points][2:] == ["no detectable difference", "no detectable difference"]
    finally:
        db.close()
