"""A deep page of a metric sort starts where the stored metric columns place it (no walk
to its offset): every page, sought, is the oracle's page, on SQLite and PostgreSQL, with
ties, repetitions, errored and unscored results, failed targets and a metric's own bound;
columns that would place rows differently are not used."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from ui_testdata import ERROR, RowSpec, make_dataset, make_experiment

from assay.store import Store, open_store
from assay.store.read import seek
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.walk import decode_cursor
from assay.ui import queries
from assay.ui.models import RowFilter

EXAMPLES = 40
LOWER = {"direction": "lower"}
Row = dict[str, Any]


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    yield opened
    opened.close()


@pytest.fixture
def db(store: Store) -> Iterator[ReadOnlyDatabase]:
    reader = ReadOnlyDatabase(store)
    yield reader
    reader.close()


@pytest.fixture
def sought(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every page past the first is sought (not only those past 5,000 rows); the cursors
    the seek found, recorded."""
    monkeypatch.setattr(seek, "DEEP", 0)
    found: list[Any] = []
    original = seek.cursor_before

    def recorded(*args: Any, **kwargs: Any) -> Any:
        cursor = original(*args, **kwargs)
        found.append(cursor)
        return cursor

    monkeypatch.setattr(seek, "cursor_before", recorded)  # rows.py calls it through the module
    return found


def _rows(seed: int) -> list[Row]:
    """Two repetitions of EXAMPLES rows: ok (0/1: two tie groups), leak (0/1, lower is
    better), sim (one decimal: many ties); some targets fail, some evaluators fail."""
    rng = random.Random(seed)
    rows: list[Row] = []
    for _ in range(2 * EXAMPLES):
        if rng.random() < 0.1:
            rows.append({"target": "RuntimeError: target broke", "ok": None, "leak": None, "sim": None})
            continue
        row: Row = {"target": None, "ok": rng.choice([0, 1, 1]), "leak": rng.choice([0, 0, 1])}
        row["sim"] = round(rng.random(), 1)
        if rng.random() < 0.15:
            row[rng.choice(["ok", "leak", "sim"])] = ERROR
        rows.append(row)
    return rows


def _build(store: Store, name: str, rows: list[Row]) -> None:
    dataset, examples = make_dataset(store, name, [{"inputs": {"i": i}} for i in range(EXAMPLES)])
    specs = [
        RowSpec(
            outputs={"o": i},
            error=row["target"],
            scores={key: row[key] for key in ("ok", "leak", "sim")},
            info={"leak": LOWER},
            repetition=i // EXAMPLES,
        )
        for i, row in enumerate(rows)
    ]
    make_experiment(store, name, dataset, examples, specs, figures=True)


def _oracle(rows: list[Row], key: str, *, descending: bool, within: Any = None) -> list[tuple[int, int]]:
    """(position, repetition) of every row in the page order: ranked rows by score (ties
    in data order), then the unranked ones in data order (none with a bound)."""
    keyed = [(i % EXAMPLES, i // EXAMPLES, row[key]) for i, row in enumerate(rows)]
    ranked = [k for k in keyed if k[2] not in (None, ERROR) and (within is None or within(k[2]))]
    ranked.sort(key=lambda k: ((-k[2] if descending else k[2]), k[0], k[1]))
    unranked = sorted(k for k in keyed if k[2] in (None, ERROR)) if within is None else []
    return [(k[0], k[1]) for k in ranked + unranked]


def _pages(db: ReadOnlyDatabase, name: str, row_filter: RowFilter, per_page: int) -> list[tuple[int, int]]:
    """Every page by its number (a typed page: no "next" link followed)."""
    experiment = queries.find_experiment(db, name)
    assert experiment is not None
    keys: list[tuple[int, int]] = []
    for page in range(1, experiment.rows // per_page + 2):
        found = queries.row_page(db, experiment, row_filter, page=page, per_page=per_page)
        keys += [(row.position, row.repetition) for row in found.rows]
    return keys


SORTS = [
    ("sim", "asc", None),
    ("sim", "desc", None),
    ("ok", "desc", None),
    ("ok", "asc", None),
    ("leak", "desc", None),
    ("sim", "desc", 0.5),  # "sim below 0.5", sorted by it
    ("sim", "asc", 0.5),
]


@pytest.mark.parametrize(("key", "order", "below"), SORTS)
@pytest.mark.parametrize("per_page", [1, 7])
def test_every_typed_page_of_a_metric_sort_is_the_oracles(
    store: Store,
    db: ReadOnlyDatabase,
    sought: list[Any],
    key: str,
    order: str,
    below: float | None,
    per_page: int,
) -> None:
    rows = _rows(seed=11)
    _build(store, "exp", rows)
    row_filter = RowFilter(
        sort=f"metric:{key}", order=order, metric=key if below is not None else None, below=below
    )
    within = None if below is None else (lambda score: score < below)
    expected = _oracle(rows, key, descending=order == "desc", within=within)
    assert _pages(db, "exp", row_filter, per_page) == expected
    ranked = len(_oracle(rows, key, descending=False, within=within or (lambda _: True)))
    # every page after the first whose previous row is ranked was sought
    assert sum(cursor is not None for cursor in sought) == ranked // per_page


def test_columns_that_would_place_rows_differently_are_not_used(
    store: Store, db: ReadOnlyDatabase, sought: list[Any]
) -> None:
    """An errored result that kept its score: the columns hold the score, the index no
    rank. The pages are walked, and still the oracle's."""
    rows = _rows(seed=12)
    dataset, examples = make_dataset(store, "leftover", [{"inputs": {"i": i}} for i in range(EXAMPLES)])
    specs = [
        RowSpec(outputs={"o": i}, error=row["target"], scores={k: row[k] for k in ("ok", "leak", "sim")},
                repetition=i // EXAMPLES)
        for i, row in enumerate(rows)
    ]  # fmt: skip
    leftover = next(
        i for i, row in enumerate(rows) if row["sim"] not in (None, ERROR) and row["target"] is None
    )
    specs[leftover].scores.pop("sim")
    original = store.write_rows

    def write_rows(experiment_id: Any, batch: list[Any]) -> None:
        from assay.schemas import EvaluationResult

        for row in batch:
            if (row.position, row.repetition) == (leftover % EXAMPLES, leftover // EXAMPLES):
                row.results.append(EvaluationResult(key="sim", score=0.2, error="TimeoutError: kept a score"))
        original(experiment_id, batch)

    store.write_rows = write_rows  # type: ignore[method-assign]
    make_experiment(store, "leftover", dataset, examples, specs, figures=True)
    rows[leftover]["sim"] = ERROR
    expected = _oracle(rows, "sim", descending=True)
    assert _pages(db, "leftover", RowFilter(sort="metric:sim", order="desc"), 7) == expected
    assert sought and not any(sought)  # asked, and the columns declined


def _failing(row: Row, thresholds: dict[str, float | None]) -> bool:
    """The rule of ``failing``: a failed target or evaluator, or a score at or worse than
    its metric's threshold (0/1 metrics: their worst value unless set)."""
    if row["target"] is not None or ERROR in row.values():
        return True
    every: dict[str, float | None] = {"ok": 0.0, "leak": 1.0, **thresholds}
    for key, threshold in every.items():
        score = row.get(key)
        if threshold is None or score is None:
            continue
        if (score >= threshold) if key == "leak" else (score <= threshold):
            return True
    return False


@pytest.mark.parametrize("thresholds", [{}, {"sim": 0.5}, {"ok": None, "sim": 0.3}])
@pytest.mark.parametrize(("key", "order"), [("sim", "desc"), ("sim", "asc"), ("ok", "desc"), ("leak", "asc")])
def test_every_typed_page_of_failing_rows_sorted_by_a_metric_is_the_oracles(
    store: Store,
    db: ReadOnlyDatabase,
    sought: list[Any],
    key: str,
    order: str,
    thresholds: dict[str, float | None],
) -> None:
    rows = _rows(seed=13)
    _build(store, "exp", rows)
    kept = [(i, row) for i, row in enumerate(rows) if _failing(row, thresholds)]
    keyed = [(i % EXAMPLES, i // EXAMPLES, row[key]) for i, row in kept]
    ranked = sorted(
        (k for k in keyed if k[2] not in (None, ERROR)),
        key=lambda k: ((-k[2] if order == "desc" else k[2]), k[0], k[1]),
    )
    unranked = sorted(k for k in keyed if k[2] in (None, ERROR))
    expected = [(k[0], k[1]) for k in ranked + unranked]
    row_filter = RowFilter(failed=True, thresholds=thresholds, sort=f"metric:{key}", order=order)  # type: ignore[arg-type]
    assert _pages(db, "exp", row_filter, 3) == expected
    assert sum(cursor is not None for cursor in sought) == len(ranked) // 3  # sought, not walked


def _steps(db: ReadOnlyDatabase, call: Any) -> int:
    """SQLite's virtual-machine steps (in thousands) ``call`` costs on the reader's
    connection of this thread: the work done, whatever the machine's load."""
    steps = [0]

    def counted() -> int:
        steps[0] += 1
        return 0

    db.conn.set_progress_handler(counted, 1000)
    try:
        call()
    finally:
        db.conn.set_progress_handler(None, 1000)
    return steps[0]


def _uniform(store: Store, name: str, rows: int) -> None:
    rng = random.Random(5)
    dataset, examples = make_dataset(store, name, [{"inputs": {"i": i}} for i in range(rows)])
    specs = [RowSpec(outputs={"o": i}, scores={"sim": rng.random()}) for i in range(rows)]
    make_experiment(store, name, dataset, examples, specs, figures=True)


def test_a_deep_typed_page_costs_a_page_not_its_offset(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A middle page by its number: sought, a few index seeks; walked (the seek off), the
    index up to its offset. Counted in SQLite's steps, not time."""
    store = open_store(f"sqlite:///{tmp_path / 'deep.db'}")
    _uniform(store, "exp", 4000)
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    row_filter = RowFilter(sort="metric:sim", order="desc")

    def page() -> list[int]:
        return [
            row.position for row in queries.row_page(db, experiment, row_filter, page=41, per_page=50).rows
        ]

    monkeypatch.setattr(seek, "DEEP", 0)
    sought_rows, sought = page(), _steps(db, page)
    monkeypatch.setattr(seek, "DEEP", 10**9)
    walked_rows, walked = page(), _steps(db, page)
    assert sought_rows == walked_rows
    assert sought * 5 < walked, f"sought {sought}k steps, walked {walked}k"
    db.close()
    store.close()


def test_a_next_link_below_a_bound_starts_at_its_rank_not_at_the_bound(tmp_path: Any) -> None:
    """ "sim below 0.9" sorted by it, descending, the page after one near the bottom: the
    walk starts at the previous page's last rank (the bound 0.9 is implied), not at 0.9."""
    store = open_store(f"sqlite:///{tmp_path / 'next.db'}")
    _uniform(store, "exp", 4000)
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    row_filter = RowFilter(metric="sim", below=0.9, sort="metric:sim", order="desc")
    previous = queries.row_page(db, experiment, row_filter, page=60, per_page=50)
    assert previous.next_after is not None
    after = decode_cursor(previous.next_after)

    def following() -> Any:
        return queries.row_page(db, experiment, row_filter, page=61, per_page=50, after=after)

    first = _steps(db, lambda: queries.row_page(db, experiment, row_filter, page=1, per_page=50))
    deep = _steps(db, following)
    assert [row.position for row in following().rows]  # rows below the previous page's
    assert deep <= 3 * max(first, 1), f"the 61st page by its link took {deep}k steps, the first {first}k"
    db.close()
    store.close()
