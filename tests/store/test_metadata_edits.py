"""Two edits of one metadata field at once (two people editing a level's feedback keys in
the UI) both land: the record is locked from the read to the write, on both backends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from assay.store import Store, open_store


def appended(name: str, inside: threading.Event | None = None, release: threading.Event | None = None):  # type: ignore[no-untyped-def]
    def edit(current: Any) -> list[str]:
        if inside is not None and release is not None:
            inside.set()
            assert release.wait(60), "the test never released the first edit"
        return [*(current or []), name]

    return edit


def test_concurrent_edits_of_one_field_both_land(store_url: str, lock_waiters: Callable[[str], int]) -> None:
    store: Store = open_store(store_url)
    dataset = store.create_dataset("keys")
    inside, release = threading.Event(), threading.Event()
    second_started = threading.Event()

    def first() -> None:
        store.edit_metadata_field("datasets", dataset.id, "feedback_keys", appended("a", inside, release))

    def second() -> None:
        second_started.set()
        other = open_store(store_url)  # another connection, as another request's thread has
        other.edit_metadata_field("datasets", dataset.id, "feedback_keys", appended("b"))
        other.close()

    one = threading.Thread(target=first)
    one.start()
    assert inside.wait(60)
    two = threading.Thread(target=second)
    two.start()
    assert second_started.wait(60)
    if store_url.startswith("postgres"):
        while not lock_waiters(store_url):  # the second edit is blocked on the row
            assert two.is_alive(), "the second edit ran while the first held the record"
            time.sleep(0.01)
    else:
        two.join(0.5)  # give it time to read; SQLite's second write transaction waits
    release.set()
    one.join(60)
    two.join(60)
    stored = store.get_dataset(id=dataset.id)
    assert stored is not None and sorted((stored.metadata or {})["feedback_keys"]) == ["a", "b"]
    store.close()
