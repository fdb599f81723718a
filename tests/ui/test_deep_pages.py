"""A deep page of a metric sort starts where the stored metric columns place it (no walk
to its offset): every page, sought, is the oracle's page, on SQLite and PostgreSQL, with
ties, repetitions, errored and unscored results, failed targets and a metric's own bound;
columns that would place rows differently are not used."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from both_backends import on_both_backends, reader_of_both  # noqa: F401 - fixtures: store, db
from ui_testdata import ERROR, RowSpec, build_scored, fails, make_dataset, make_experiment, scored_rows

from assay import Client
from assay.store import Store, open_store
from assay.store.read import seek
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.walk import decode_cursor
from assay.ui import queries
from assay.ui.models import RowFilter

EXAMPLES = 40
Row = dict[str, Any]


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
    """Two repetitions of EXAMPLES rows (sim with one decimal: many ties), each with a
    latency: many ties, and runs that never ended."""
    rows = scored_rows(seed, 2 * EXAMPLES, digits=1)
    rng = random.Random(seed)
    for row in rows:
        row["latency"] = rng.choice([None, 0.5, 2.0, 2.0, 3.25, 7.0])
    return rows


def _build(store: Store, name: str, rows: list[Row]) -> None:
    build_scored(store, name, rows, examples=EXAMPLES)


def _oracle(rows: list[Row], key: str, *, descending: bool, within: Any = None) -> list[tuple[int, int]]:
    """(position, repetition) of every row in the page order: ranked rows by score (ties
    in data order), then the unranked ones in data order (none with a bound)."""
    keyed = [(i % EXAMPLES, i // EXAMPLES, row[key]) for i, row in enumerate(rows)]
    ranked = [k for k in keyed if k[2] not in (None, ERROR) and (within is None or within(k[2]))]
    ranked.sort(key=lambda k: ((-k[2] if descending else k[2]), k[0], k[1]))
    unranked = sorted(k for k in keyed if k[2] in (None, ERROR)) if within is None else []
    return [(k[0], k[1]) for k in ranked + unranked]


def _pages(
    db: ReadOnlyDatabase, name: str, row_filter: RowFilter, per_page: int, totals: set[int] | None = None
) -> list[tuple[int, int]]:
    """Every page by its number (a typed page: no "next" link followed); ``totals``: each
    page's count of matching rows, gathered."""
    experiment = queries.find_experiment(db, name)
    assert experiment is not None
    keys: list[tuple[int, int]] = []
    for page in range(1, experiment.rows // per_page + 2):
        found = queries.row_page(db, experiment, row_filter, page=page, per_page=per_page)
        keys += [(row.position, row.repetition) for row in found.rows]
        if totals is not None and found.rows:
            totals.add(found.total)
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


@pytest.mark.parametrize("thresholds", [{}, {"sim": 0.5}, {"ok": None, "sim": 0.3}])
@pytest.mark.parametrize(("key", "order"), [("sim", "desc"), ("sim", "asc"), ("ok", "desc"), ("leak", "asc")])
def test_every_typed_page_of_failing_rows_sorted_by_a_metric_is_the_oracles(
    store: Store,
    db: ReadOnlyDatabase,
    seeks: list[Any],
    key: str,
    order: str,
    thresholds: dict[str, float | None],
) -> None:
    rows = _rows(seed=13)
    _build(store, "exp", rows)
    kept = [(i, row) for i, row in enumerate(rows) if fails(row, thresholds)]
    keyed = [(i % EXAMPLES, i // EXAMPLES, row[key]) for i, row in kept]
    ranked = sorted(
        (k for k in keyed if k[2] not in (None, ERROR)),
        key=lambda k: ((-k[2] if order == "desc" else k[2]), k[0], k[1]),
    )
    unranked = sorted(k for k in keyed if k[2] in (None, ERROR))
    expected = [(k[0], k[1]) for k in ranked + unranked]
    row_filter = RowFilter(failed=True, thresholds=thresholds, sort=f"metric:{key}", order=order)  # type: ignore[arg-type]
    assert _pages(db, "exp", row_filter, 3) == expected
    assert sum(cursor is not None for cursor in seeks) == (len(expected) - 1) // 3  # sought, not walked


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


def _rank(row: Row, sort: str) -> float | None:
    """A row's rank in a sort (None: unranked), as the page orders it."""
    if sort == "latency":
        return None if row["latency"] is None else float(row["latency"])
    if sort == "error":
        return 0.0 if row["target"] is None else 1.0
    score = row[sort.removeprefix("metric:")]
    return None if score in (None, ERROR) else float(score)


def _ordered(rows: list[Row], kept: list[int], sort: str, order: str) -> list[tuple[int, int]]:
    """(position, repetition) of the kept rows (indexes into ``rows``) in the page order:
    data order (descending: positions descending, repetitions ascending), or ranked rows
    by rank (ties in data order), then the unranked ones in data order."""
    place = {i: (i % EXAMPLES, i // EXAMPLES) for i in kept}
    if sort == "position":
        flip = -1 if order == "desc" else 1
        return sorted(place.values(), key=lambda k: (flip * k[0], k[1]))
    ranked = [i for i in kept if _rank(rows[i], sort) is not None]
    sign = -1 if order == "desc" else 1
    ranked.sort(key=lambda i: (sign * (_rank(rows[i], sort) or 0.0), place[i]))
    unranked = sorted(place[i] for i in kept if _rank(rows[i], sort) is None)
    return [place[i] for i in ranked] + unranked


@pytest.fixture
def seeks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every page past the first is sought; what each seek (the metric columns', the row
    orders') found, recorded."""
    monkeypatch.setattr(seek, "DEEP", 0)
    found: list[Any] = []
    for name in ("cursor_before", "order_cursor"):
        original = getattr(seek, name)

        def recorded(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            cursor = _original(*args, **kwargs)
            found.append(cursor)
            return cursor

        monkeypatch.setattr(seek, name, recorded)
    return found


FILTERS: list[tuple[str, dict[str, Any], Any]] = [
    ("all", {}, lambda row: True),
    ("failed", {"failed": True}, lambda row: fails(row, {})),
    (
        "failed sim<=0.5",
        {"failed": True, "thresholds": {"sim": 0.5}},
        lambda row: fails(row, {"sim": 0.5}),
    ),
    (
        "sim<0.5",
        {"metric": "sim", "below": 0.5},
        lambda row: row["sim"] not in (None, ERROR) and row["sim"] < 0.5,
    ),
]


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("sort", ["position", "latency", "error", "metric:ok"])
@pytest.mark.parametrize("which", [f[0] for f in FILTERS])
def test_every_typed_page_of_every_sort_and_filter_is_the_oracles(
    store: Store, db: ReadOnlyDatabase, seeks: list[Any], sort: str, order: str, which: str
) -> None:
    """Latency, errored, data order and a metric's sort, under no filter, the failing rows
    (two thresholds) and another metric's bound: every page by its number is the oracle's,
    and every page after the first starts where a seek placed it (no walk)."""
    rows = _rows(seed=21)
    _build(store, "exp", rows)
    _, params, keeps = next(f for f in FILTERS if f[0] == which)
    kept = [i for i, row in enumerate(rows) if keeps(row)]
    expected = _ordered(rows, kept, sort, order)
    row_filter = RowFilter(sort=sort, order=order, **params)
    totals: set[int] = set()
    assert _pages(db, "exp", row_filter, 3, totals) == expected
    assert totals == {len(expected)}  # counted on the first page (then kept by the reader)
    later_pages = (len(expected) - 1) // 3
    assert sum(cursor is not None for cursor in seeks) == later_pages, seeks
    fresh = ReadOnlyDatabase(store)  # a deep page first: counted where its seek reads
    experiment = queries.find_experiment(fresh, "exp")
    assert experiment is not None
    assert queries.row_page(fresh, experiment, row_filter, page=3, per_page=3).total == len(expected)
    fresh.close()


def test_a_column_set_built_without_row_orders_is_walked(tmp_path: Any, seeks: list[Any]) -> None:
    """A store whose columns were built before row orders were stored: no order answers,
    every page is walked, and still the oracle's."""
    store = open_store(f"sqlite:///{tmp_path / 'old.db'}")
    rows = _rows(seed=22)
    _build(store, "exp", rows)
    with store.transaction() as conn:  # type: ignore[attr-defined]
        conn.execute("DELETE FROM row_orders")
    db = ReadOnlyDatabase(store)
    kept = [i for i, row in enumerate(rows) if fails(row, {})]
    for sort in ("latency", "position"):
        expected = _ordered(rows, kept, sort, "desc")
        assert _pages(db, "exp", RowFilter(failed=True, sort=sort, order="desc"), 3) == expected
    assert seeks and not any(seeks)
    db.close()
    store.close()


def _mixed(store: Store, name: str, rows: int) -> None:
    """Rows with a uniform latency and similarity, half of them failing (``ok`` 0)."""
    rng = random.Random(6)
    dataset, examples = make_dataset(store, name, [{"inputs": {"i": i}} for i in range(rows)])
    specs = [
        RowSpec(
            outputs={"o": i},
            scores={"sim": rng.random(), "ok": rng.choice([0, 1])},
            latency_ms=round(rng.uniform(1, 500), 3),
        )
        for i in range(rows)
    ]
    make_experiment(store, name, dataset, examples, specs, figures=True)


DEEP_PAGES = [
    RowFilter(sort="latency", order="desc"),
    RowFilter(sort="latency"),
    RowFilter(sort="error"),
    RowFilter(sort="error", order="desc"),
    RowFilter(failed=True),
    RowFilter(failed=True, sort="latency"),
    RowFilter(metric="sim", below=0.5, sort="latency", order="desc"),
    RowFilter(sort="position"),
]


@pytest.mark.parametrize("row_filter", DEEP_PAGES, ids=lambda f: f"{f.sort}-{f.order}-{f.failed}-{f.metric}")
def test_a_deep_page_of_any_sort_costs_a_page_not_its_offset(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, row_filter: RowFilter
) -> None:
    """The last full page of 10 rows (offset ~2,000 or ~4,000): sought, a few index seeks,
    as many steps as the second page; walked (the seek off), every entry before it (the
    failing rows: each checked on its results). Counted in SQLite's steps, not time."""
    store = open_store(f"sqlite:///{tmp_path / 'deep.db'}")
    _mixed(store, "exp", 4000)
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None

    total = queries.row_page(db, experiment, row_filter, page=1, per_page=10).total  # the count, kept
    deepest = total // 10 - 1

    def page(number: int = deepest) -> list[int]:
        found = queries.row_page(db, experiment, row_filter, page=number, per_page=10)
        return [row.position for row in found.rows]

    monkeypatch.setattr(seek, "DEEP", 0)
    second = _steps(db, lambda: page(2))
    sought_rows, sought = page(), _steps(db, page)
    monkeypatch.setattr(seek, "DEEP", 10**9)
    walked_rows, walked = page(), _steps(db, page)
    assert len(sought_rows) == 10
    assert sought_rows == walked_rows
    assert sought <= 2 * second + 1, f"the deepest page took {sought}k steps, page 2 {second}k"
    assert sought * 3 < walked, f"sought {sought}k steps, walked {walked}k"
    db.close()
    store.close()


@pytest.mark.parametrize("sort", ["metric:ok", "latency", "position"])
def test_the_first_page_under_another_metrics_bound_is_not_a_count_of_every_row(
    tmp_path: Any, sort: str
) -> None:
    """ "sim below 0.5" sorted by something else: its count is the bound's (stored columns),
    not a check of every row's results; the page costs about what the unfiltered one does.
    Counted in SQLite's steps, not time."""
    store = open_store(f"sqlite:///{tmp_path / 'bound.db'}")
    _mixed(store, "exp", 4000)
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    bounded = RowFilter(metric="sim", below=0.5, sort=sort)
    unfiltered = _steps(
        db, lambda: queries.row_page(db, experiment, RowFilter(sort=sort), page=1, per_page=10)
    )
    steps = _steps(db, lambda: queries.row_page(db, experiment, bounded, page=1, per_page=10))
    scores = [row["score"] for row in db.query("SELECT score FROM results WHERE key = 'sim'")]
    assert queries.row_page(db, experiment, bounded, page=1, per_page=10).total == sum(
        s < 0.5 for s in scores
    )
    assert steps <= 3 * unfiltered + 2, (
        f"the bounded first page took {steps}k steps, unfiltered {unfiltered}k"
    )
    db.close()
    store.close()


def same(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    return bool(outputs == reference_outputs)


def test_a_run_stores_its_row_orders_and_its_deep_pages_seek(store_url: str, seeks: list[Any]) -> None:
    """Through ``evaluate`` (the SQLite writer process builds the columns after the run's
    last commit; PostgreSQL's run thread): the row orders are stored with the metric
    columns, and every page by latency, descending, is sought and the oracle's (the runs'
    stored latencies sorted in Python)."""
    client = Client(store_url)
    results = client.evaluate(
        lambda inputs: {"y": inputs["x"] % 3},
        data=[{"inputs": {"x": i}, "outputs": {"y": i % 2}} for i in range(30)],
        evaluators=[same],
    )
    name = results.experiment_name
    for thread in threading.enumerate():  # PostgreSQL's build, in the background
        if thread.name == "assay-columns":
            thread.join()
    client.close()
    store = open_store(store_url)
    db = ReadOnlyDatabase(store)
    experiment = queries.find_experiment(db, name)
    assert experiment is not None
    stored = db.query("SELECT name FROM row_orders WHERE experiment_id = ?", (experiment.id,))
    assert sorted(row[0] for row in stored) == ["error", "latency", "metric:same"]
    runs = db.query(
        "SELECT position, repetition, latency_ms FROM runs WHERE experiment_id = ?", (experiment.id,)
    )
    expected = [(row[0], row[1]) for row in sorted(runs, key=lambda row: (-row[2], row[0], row[1]))]
    assert _pages(db, name, RowFilter(sort="latency", order="desc"), 4) == expected
    assert sum(cursor is not None for cursor in seeks) == (len(expected) - 1) // 4
    db.close()
    store.close()


@pytest.mark.parametrize("write", ["discard_failed_runs", "reopen"])
def test_a_write_of_the_runs_drops_the_row_orders(store: Store, db: ReadOnlyDatabase, write: str) -> None:
    """The orders exist only while true: a write of the experiment's runs drops them with
    the metric columns (in its transaction), and its pages are walked, still the oracle's."""
    rows = _rows(seed=23)
    _build(store, "exp", rows)
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None

    def stored() -> int:
        found = db.query("SELECT COUNT(*) FROM row_orders WHERE experiment_id = ?", (experiment.id,))
        return int(found[0][0])

    assert stored() == 5  # latency, errored, ok, leak, sim
    record = store.get_experiment(name="exp")
    assert record is not None
    if write == "reopen":
        store.reopen_experiment(record.id)
    else:  # the failed targets' rows removed, to be run again
        store.discard_failed_runs(record.id)  # type: ignore[attr-defined]
    assert stored() == 0
