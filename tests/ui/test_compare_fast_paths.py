"""The compare page's fast paths (the rows of one page, counts from the pair index) give
the answers of the full classification, on random rows with errors, failed targets and
a lower-is-better metric."""

from __future__ import annotations

import random

import pytest
from ui_testdata import ERROR, RowSpec, make_dataset, make_experiment

from assay.store import Store
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.figures import finished_with_figures as _finished_with_figures
from assay.ui import queries

N = 60


def _specs(rng: random.Random) -> list[RowSpec]:
    specs = []
    for i in range(N):
        failed = rng.random() < 0.1
        scores: dict[str, object] = {
            "ok": rng.random() < 0.6,
            "sim": rng.choice([0.2, 0.5, 0.5, 0.9]),
            "dist": ERROR if rng.random() < 0.15 else rng.choice([0.0, 0.3, 0.6]),
        }
        specs.append(
            RowSpec(
                outputs=None if failed else {"o": i},
                error="RuntimeError: target failed" if failed else None,
                scores=scores,
                info={"dist": {"direction": "lower"}},
            )
        )
    return specs


@pytest.fixture
def db(store: Store) -> ReadOnlyDatabase:
    dataset, examples = make_dataset(store, "fast", [{"inputs": {"i": i}} for i in range(N)])
    make_experiment(store, "base", dataset, examples, _specs(random.Random(1)))
    make_experiment(store, "cand", dataset, examples, _specs(random.Random(2)))
    return ReadOnlyDatabase(store)


def _page(db: ReadOnlyDatabase, show: str, metric: str | None, page: int = 1, per_page: int = 500) -> object:
    exps = [queries.find_experiment(db, name) for name in ("base", "cand")]
    return queries.compare_page(db, exps, show=show, metric=metric, page=page, per_page=per_page)  # type: ignore[arg-type]


@pytest.mark.parametrize("metric", [None, "ok", "sim", "dist"])
def test_every_row_page_agrees_with_the_filtered_classification(
    db: ReadOnlyDatabase, metric: str | None
) -> None:
    everything = _page(db, "all", metric)
    change = {(r.example_id, r.repetition): r.change for r in everything.rows}  # type: ignore[attr-defined]
    assert len(change) == N and everything.total == N  # type: ignore[attr-defined]
    for show, kinds in (("regressions", {"regressed", "mixed"}), ("improvements", {"improved", "mixed"})):
        shown = {(r.example_id, r.repetition) for r in _page(db, show, metric).rows}  # type: ignore[attr-defined]
        assert shown == {k for k, v in change.items() if v in kinds}, show
    assert len(set(change.values())) >= 3  # the data really has changes both ways
    # Pages of 7 cover the same rows in the same order.
    paged = [r for p in range(1, 10) for r in _page(db, "all", metric, page=p, per_page=7).rows]  # type: ignore[attr-defined]
    assert [(r.example_id, r.change) for r in paged] == [(r.example_id, r.change) for r in everything.rows]  # type: ignore[attr-defined]


def test_per_metric_counts_match_the_rows_each_filter_shows(db: ReadOnlyDatabase) -> None:
    page = _page(db, "all", None)
    for m in page.metrics:  # type: ignore[attr-defined]
        other = next(iter(m.regressions))
        assert m.regressions[other] == _page(db, "regressions", m.key).total, m.key
        assert m.improvements[other] == _page(db, "improvements", m.key).total, m.key
    assert sum(m.regressions[other] + m.improvements[other] for m in page.metrics) > 10  # type: ignore[attr-defined]


def test_finished_experiments_read_their_stored_figures_with_the_same_answers(tmp_path: object) -> None:
    from pathlib import Path

    import assay

    client = assay.Client(str(Path(str(tmp_path)) / "run.db"))
    data = [{"inputs": {"x": i}, "outputs": {}} for i in range(30)]

    def make(seed: int) -> object:
        def target(inputs: dict) -> dict:
            if (inputs["x"] + seed) % 7 == 0:
                raise RuntimeError("timed out")
            return {"y": (inputs["x"] * (seed + 3)) % 10}

        def high(outputs: dict) -> float:
            return outputs["y"] / 10

        def judge(inputs: dict) -> bool:
            if (inputs["x"] + seed) % 5 == 0:
                raise ValueError("judge broke")
            return (inputs["x"] + seed) % 3 == 0

        return client.evaluate(target, data=data, evaluators=[judge, high], experiment_prefix=f"s{seed}")

    names = [make(1).experiment_name, make(2).experiment_name]  # type: ignore[attr-defined]
    db = ReadOnlyDatabase(client.store)
    exps = [queries.find_experiment(db, name) for name in names]

    def shown() -> tuple[list[str], list[tuple[object, ...]]]:
        page = queries.compare_page(db, exps, show="all", metric=None, page=1, per_page=50)  # type: ignore[arg-type]
        return page.metric_keys, [
            (m.key, m.errors, m.regressions, m.improvements, [round(v or 0, 12) for v in m.means.values()])
            for m in page.metrics
        ]

    ids = [e.id for e in exps]  # type: ignore[union-attr]
    assert _finished_with_figures(db, ids)
    stored = shown()
    client.store.conn.execute("DELETE FROM experiment_stats")  # type: ignore[attr-defined]
    assert not _finished_with_figures(db, ids)
    scanned = shown()
    client.close()
    assert stored == scanned and stored[0] == ["judge", "high"]
    judge_errors = stored[1][0][1]
    assert isinstance(judge_errors, dict) and sum(judge_errors.values()) > 0
