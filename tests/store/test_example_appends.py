"""Appending examples to a dataset that has some: linear in the examples on PostgreSQL
(whose planner answered the per-page duplicate check by walking the whole dataset once a
page), and every clash still refused with the message that names it."""

from __future__ import annotations

import sys
import uuid
from typing import Any

import psycopg
import pytest

from assay.errors import AlreadyExistsError
from assay.schemas import Example
from assay.store import open_store
from assay.store.sqlite._examples import PAGE

entries_read = sys.modules["assay_tests_postgres"].examples_entries_read  # tests/_postgres.py


def _examples(dataset_id: uuid.UUID, count: int, ids: list[uuid.UUID] | None = None) -> list[Example]:
    ids = ids or [uuid.uuid4() for _ in range(count)]
    return [Example(id=id_, dataset_id=dataset_id, inputs={"x": i}) for i, id_ in enumerate(ids)]


def _append_work(url: str, admin: Any, existing: int, appended: int, inserted: int) -> int:
    """Entries of ``examples`` the server read to append ``appended`` examples to a new
    dataset of ``existing``; ``inserted``: examples stored in the database before."""
    store = open_store(url)
    dataset = store.create_dataset(f"d-{uuid.uuid4().hex[:6]}")
    store.add_examples(dataset.id, _examples(dataset.id, existing))
    store.close()
    before = entries_read(admin, inserted + existing)
    store = open_store(url)
    store.add_examples(dataset.id, _examples(dataset.id, appended))
    store.close()
    return entries_read(admin, inserted + existing + appended) - before


def test_appending_to_a_dataset_is_linear_in_server_work(postgres_store_url: str) -> None:
    n = 2 * PAGE
    with psycopg.connect(postgres_store_url, autocommit=True) as admin:
        small = _append_work(postgres_store_url, admin, n, n, 0)
        large = _append_work(postgres_store_url, admin, 4 * n, 4 * n, 2 * n)
    # linear: about 4x the entries read for 4x the examples (quadratic was ~18x)
    assert large <= 5 * small, f"appending {n} examples read {small} entries, {4 * n} read {large}"


@pytest.mark.parametrize("where", ["first page", "third page"])
def test_an_id_the_dataset_holds_is_refused_on_any_page(store_url: str, where: str) -> None:
    store = open_store(store_url)
    dataset = store.create_dataset("d")
    held = _examples(dataset.id, 10)
    store.add_examples(dataset.id, held)
    appended = _examples(dataset.id, 3 * PAGE)
    at = 5 if where == "first page" else 2 * PAGE + 5
    appended[at] = Example(id=held[3].id, dataset_id=dataset.id, inputs={"x": -1})
    with pytest.raises(
        AlreadyExistsError, match=f"already has an example with id {held[3].id}; use update_example"
    ):
        store.add_examples(dataset.id, appended)
    assert len(store.list_examples(dataset.id)) == 10  # nothing of the failed call stored
    store.close()


def test_an_id_repeated_pages_apart_in_one_append_names_its_second_position(store_url: str) -> None:
    store = open_store(store_url)
    dataset = store.create_dataset("d")
    store.add_examples(dataset.id, _examples(dataset.id, 10))
    appended = _examples(dataset.id, 3 * PAGE)
    second = 2 * PAGE + 7
    appended[second] = Example(id=appended[1].id, dataset_id=dataset.id, inputs={"x": -1})
    with pytest.raises(
        AlreadyExistsError,
        match=f"example id {appended[1].id} appears twice \\(the second at position {second}\\)",
    ):
        store.add_examples(dataset.id, appended)
    assert len(store.list_examples(dataset.id)) == 10
    store.close()


def test_a_removed_id_may_come_back_in_a_long_append(store_url: str) -> None:
    store = open_store(store_url)
    dataset = store.create_dataset("d")
    held = _examples(dataset.id, 10)
    store.add_examples(dataset.id, held)
    store.delete_example(held[4].id)
    appended = _examples(dataset.id, 2 * PAGE + 1)
    appended[PAGE + 3] = Example(id=held[4].id, dataset_id=dataset.id, inputs={"x": "back"})
    store.add_examples(dataset.id, appended)
    assert len(store.list_examples(dataset.id)) == 9 + 2 * PAGE + 1
    store.close()
