"""The rows a search finds, through the text index or the scan: against a plain-Python
oracle on SQLite and PostgreSQL (case, non-ASCII, JSON escapes, lone surrogates, LIKE
wildcards, queries too short for trigrams); an index that is only ever read while true
(every write of the runs drops it, a write during a build discards the build); a store of
schema 8 migrating; the server building it in the background."""

from __future__ import annotations

import re
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from both_backends import on_both_backends, reader_of_both  # noqa: F401 - fixtures: store, db
from fastapi.testclient import TestClient
from playwright.sync_api import Page, expect
from ui_testdata import LiveServer

from assay.schemas import EvaluationResult, Example, Run
from assay.store import Store, open_store, text_index
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.search import search_clause
from assay.store.records import ExperimentRecord, ExperimentRow
from assay.store.sqlite import _statements
from assay.ui import create_app, queries
from assay.ui.models import RowFilter

TEXTS = [
    "Paris is the capital",
    "PARIS, France",
    "paris in lower case",
    "Straße in München",
    "STRASSE",
    "École normale",
    "école du soir",
    "中文字符测试",
    "emoji 😀 here",
    'she said "hi" to me',
    "a back\\slash and a \\n escape",
    "50% off, a_b and a%b",
    "lone \ud800 surrogate",
    "tab\tand newline\nin text",
    "İstanbul and ıi",
    "question 1234",
    "question 12345",
    "",
]
QUERIES = [
    "paris",
    "PARIS",
    "Paris",
    "par",
    "aris, f",
    "straße",
    "STRASSE",
    "strasse",
    "école",
    "École",
    "ÉCOLE",
    "cole",
    "中文字",
    "文字符测",
    "😀 h",
    "emoji 😀",
    '"hi"',
    '\\"hi\\"',
    'd \\"',
    "\\\\",
    "\\n",
    "\\ud800",
    "ud800",
    "50%",
    "%",
    "_",
    "a_b",
    "a%b",
    "%b",
    "\\t",
    "tab",
    "İst",
    "ıi",
    "question 1234",
    "question 12345",
    "o",
    "ab",
    "1",
    "é",
    "中文",
    "q",
    "00",
    "nothing here",
    '": "',
    "{",
    '"o"',
]
REPEATS = 2


def _rows(examples: list[Example], offset: int = 0) -> list[ExperimentRow]:
    rows = []
    for position, example in enumerate(examples):
        for repetition in range(REPEATS):
            text = TEXTS[(position + repetition + offset) % len(TEXTS)]
            run = Run(
                inputs=example.inputs, outputs={"o": text, "n": position} if repetition else {"answer": text}
            )
            result = EvaluationResult(key="s", score=position % 3 / 2)
            rows.append(
                ExperimentRow(
                    run=run, example=example, repetition=repetition, position=position, results=[result]
                )
            )
    return rows


def _experiment(store: Store, name: str = "exp", *, status: str = "completed") -> ExperimentRecord:
    dataset = store.create_dataset(f"data-{name}")
    store.add_examples(dataset.id, [Example(inputs={"q": t, "i": i}) for i, t in enumerate(reversed(TEXTS))])
    examples = list(store.iter_examples(dataset.id))
    record = ExperimentRecord(
        name=name,
        dataset_id=dataset.id,
        dataset_version=1,
        status="running",
        num_examples=len(examples),
        num_repetitions=REPEATS,
    )
    store.create_experiment(record)
    rows = _rows(examples)
    for start in range(0, len(rows), 7):
        store.write_rows(record.id, rows[start : start + 7])
    if status != "running":
        store.finish_experiment(record.id, status)
    return record


def _postgres(store: Store) -> bool:
    return store.url.startswith("postgres")


def oracle(store: Store, record: ExperimentRecord, query: str) -> list[tuple[int, int]]:
    """The rows whose stored inputs or outputs text holds ``query``, ASCII letters in
    either case (SQLite's LIKE), on either backend."""

    def fold(text: str) -> str:
        return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)

    stored = store.conn.execute(
        "SELECT position, repetition, inputs, outputs FROM runs WHERE experiment_id = ?", (str(record.id),)
    ).fetchall()
    return sorted(
        (row[0], row[1])
        for row in stored
        if any(text is not None and fold(query) in fold(text) for text in (row[2], row[3]))
    )


def found(db: ReadOnlyDatabase, query: str, **sort: Any) -> list[tuple[int, int]]:
    experiment = queries.find_experiment(db, "exp")
    assert experiment is not None
    page = queries.row_page(db, experiment, RowFilter(q=query, **sort), page=1, per_page=500)
    assert page.total == len(page.rows)
    return [(row.position, row.repetition) for row in page.rows]


def test_the_index_finds_the_rows_the_scan_does_in_the_same_order(store: Store, db: ReadOnlyDatabase) -> None:
    record = _experiment(store)
    scanned = {q: found(db, q) for q in QUERIES}
    by_latency = {q: found(db, q, sort="latency", order="desc") for q in QUERIES}
    for q in QUERIES:
        assert scanned[q] == oracle(store, record, q), q
    assert sum(map(len, scanned.values())) > 100  # the queries do match
    index = text_index.build(store, str(record.id))
    assert index is not None and text_index.built(store.conn, str(record.id)) == index
    for q in QUERIES:
        assert found(db, q) == scanned[q], q
        assert found(db, q, sort="latency", order="desc") == by_latency[q], q
        uses_index = index.name in search_clause(db, str(record.id), q).condition
        assert uses_index == (len(q) >= text_index.MIN_CHARS), q  # short ones: the scan


def test_the_index_narrows_with_its_candidates(store: Store, db: ReadOnlyDatabase) -> None:
    """The candidate condition alone already keeps few rows (it is not a pass-through)."""
    record = _experiment(store)
    index = text_index.build(store, str(record.id))
    assert index is not None
    narrowed = text_index.candidates(index, "question 12345")
    assert narrowed is not None
    kept = db.query(f"SELECT COUNT(*) FROM runs u WHERE {narrowed[0]}", narrowed[1])[0][0]
    assert 0 < kept <= 4 < len(TEXTS) * REPEATS


def _extra_row(store: Store, record: ExperimentRecord, text: str) -> ExperimentRow:
    example = next(iter(store.iter_examples(record.dataset_id)))  # type: ignore[arg-type]
    return ExperimentRow(run=Run(inputs={}, outputs={"o": text}), example=example, repetition=9, position=0)


@pytest.mark.parametrize("write", ["write_rows", "discard_failed_runs", "reopen", "delete_experiment"])
def test_every_write_of_the_runs_drops_the_index(store: Store, db: ReadOnlyDatabase, write: str) -> None:
    record = _experiment(store)
    assert text_index.build(store, str(record.id)) is not None
    if write == "write_rows":
        store.write_rows(record.id, [_extra_row(store, record, "zebra crossing")])
    elif write == "discard_failed_runs":
        store.discard_failed_runs(record.id)
    elif write == "reopen":
        store.reopen_experiment(record.id)
    else:
        store.delete_experiment(record.id)
    assert text_index.built(store.conn, str(record.id)) is None
    if write == "write_rows":  # the new row is found (by the scan, until a rebuild)
        assert found(db, "zebra") == [(0, 9)]
        assert text_index.build(store, str(record.id)) is not None
        assert found(db, "ZEBRA") == [(0, 9)]  # ASCII case folded on either backend


def test_deleting_an_experiment_drops_its_index_table(store: Store) -> None:
    record = _experiment(store)
    index = text_index.build(store, str(record.id))
    assert index is not None and index.name in {row[0] for row in _tables(store)}
    store.delete_experiment(record.id)
    assert index.name not in {row[0] for row in _tables(store)}


def test_a_rescore_keeps_the_index_true(store: Store, db: ReadOnlyDatabase) -> None:
    """Results carry no searched text: a rescore leaves the index, and the rows found."""
    record = _experiment(store)
    assert text_index.build(store, str(record.id)) is not None
    before = found(db, "paris")
    run_ids = [
        uuid.UUID(r[0])
        for r in store.conn.execute(
            "SELECT id FROM runs WHERE experiment_id = ?", (str(record.id),)
        ).fetchall()
    ]
    store.write_results(
        record.id, [(run_id, [EvaluationResult(key="s", score=1.0)]) for run_id in run_ids], replace=True
    )
    assert text_index.built(store.conn, str(record.id)) is not None
    assert found(db, "paris") == before == oracle(store, record, "paris")


class _WritesDuringBuild:
    """The store, with one write of the experiment's runs between two chunks of a build."""

    def __init__(self, store: Store, record: ExperimentRecord) -> None:
        self.store, self.record, self.calls = store, record, 0
        self.url = store.url

    @property
    def conn(self) -> Any:
        return self.store.conn  # type: ignore[attr-defined]

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        self.calls += 1
        if self.calls == 3:  # after the pending mark and the first chunk
            self.store.write_rows(self.record.id, [_extra_row(self.store, self.record, "zebra crossing")])
        with self.store.transaction() as conn:  # type: ignore[attr-defined]
            yield conn


def test_a_write_during_a_build_discards_it(store: Store, db: ReadOnlyDatabase) -> None:
    record = _experiment(store)
    assert text_index.build(_WritesDuringBuild(store, record), str(record.id), chunk=5) is None
    assert text_index.built(store.conn, str(record.id)) is None
    assert found(db, "zebra") == [(0, 9)]
    index = text_index.build(store, str(record.id))  # the next build drops the abandoned table
    assert index is not None
    tables = {row[0] for row in _tables(store)}
    assert [t for t in tables if t.startswith("run_text_") and "_" not in t[9:]] == [index.name]
    assert found(db, "zebra") == [(0, 9)]


def _tables(store: Store) -> list[Any]:
    if _postgres(store):
        return store.conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
    return store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()


def test_the_server_builds_the_index_of_a_finished_experiment_in_the_background(store: Store) -> None:
    running = _experiment(store, "running", status="running")
    record = _experiment(store)
    with TestClient(create_app(store), base_url="http://127.0.0.1:8765") as http:
        for name in ("running", "exp"):
            answer = http.get(f"/api/experiments/{name}/rows", params={"q": "paris"})
            assert answer.status_code == 200
        deadline = time.monotonic() + 30
        while text_index.built(store.conn, str(record.id)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert text_index.built(store.conn, str(record.id)) is not None
        assert text_index.built(store.conn, str(running.id)) is None  # rows not final: none
        rows = http.get("/api/experiments/exp/rows", params={"q": "paris", "per_page": 100}).json()["rows"]
        assert [(r["position"], r["repetition"]) for r in rows] == oracle(store, record, "paris")


def test_a_store_of_schema_8_migrates_and_searches(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    with conn:
        for script in MIGRATIONS[:8]:
            for statement in _statements(script):
                conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema_version', '8')")
    conn.close()
    store = open_store(str(path))
    db = ReadOnlyDatabase(store)
    try:
        assert store.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
            SCHEMA_VERSION
        )
        record = _experiment(store)
        assert text_index.build(store, str(record.id)) is not None
        assert found(db, "paris") == oracle(store, record, "paris") != []
    finally:
        db.close()
        store.close()


@pytest.mark.slow
def test_a_search_in_chromium_finds_the_rows_before_and_after_the_index(tmp_path: Path, page: Page) -> None:
    """Typed into the experiment page's search field, in real headless Chromium against a
    real server: the scan's rows first, the index's (built meanwhile) the same after."""
    store = open_store(str(tmp_path / "ui.db"))
    record = _experiment(store)
    expected = [position + 1 for position, _ in oracle(store, record, "PARIS")]
    assert len(expected) > 2
    try:
        with LiveServer(store) as server:
            shown = []
            for _ in range(2):
                page.goto(f"{server.url}/experiments/exp")
                page.locator("input[name=q]").fill("PARIS")
                page.locator("input[name=q]").press("Enter")
                page.wait_for_url(re.compile(r"q=PARIS"))
                expect(page.locator(".pager")).to_contain_text(f"{len(expected)} rows")
                shown.append(row_numbers(page))
                deadline = time.monotonic() + 30
                while text_index.built(store.conn, str(record.id)) is None and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert text_index.built(store.conn, str(record.id)) is not None
            assert shown == [expected, expected]
    finally:
        store.close()


def row_numbers(page: Page) -> list[int]:
    return [int(text.split(".")[0]) for text in page.locator("#row-table tbody a.row-link").all_inner_texts()]
