"""Two patches of one traced run at once (``Client.update_run`` from two threads, as a
run's end and its outputs may arrive) both land: the run is locked from its read to its
write. The test holds the run's row itself, so that both patches have read, or wait to
read, before either writes."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import psycopg

from assay import Client


def test_concurrent_patches_of_one_run_both_land(store_url: str, lock_waiters: Callable[[str], int]) -> None:
    client = Client(store_url)
    run_id = uuid.uuid4()
    client.create_run("step", {"q": 1}, "chain", id=run_id, project_name="patches")
    patches = [
        threading.Thread(target=client.update_run, args=(run_id,), kwargs={"outputs": {"answer": 42}}),
        threading.Thread(
            target=client.update_run, args=(run_id,), kwargs={"extra": {"metadata": {"k": "v"}}}
        ),
    ]
    with _holding(store_url, run_id):
        for patch in patches:
            patch.start()
        if store_url.startswith("postgres"):
            while lock_waiters(store_url) < 2:  # both patches wait on the run's row
                time.sleep(0.01)
        else:
            time.sleep(0.5)  # SQLite: both wait for the write lock the test holds
    for patch in patches:
        patch.join(60)
    run = client.read_run(run_id)
    assert run.outputs == {"answer": 42}
    assert (run.extra or {}).get("metadata", {}).get("k") == "v"
    client.close()


class _holding:
    """The run's row locked by a transaction of the test's own (SQLite: the write lock)."""

    def __init__(self, store_url: str, run_id: uuid.UUID) -> None:
        self.url, self.run_id = store_url, run_id

    def __enter__(self) -> None:
        if self.url.startswith("postgres"):
            self.pg = psycopg.connect(self.url.replace("postgresql+psycopg://", "postgresql://"))
            self.pg.execute("SELECT 1 FROM traced_runs WHERE id = %s FOR UPDATE", (str(self.run_id),))
        else:
            import sqlite3

            self.lite = sqlite3.connect(self.url.removeprefix("sqlite:///"), isolation_level=None)
            self.lite.execute("BEGIN IMMEDIATE")

    def __exit__(self, *exc: object) -> None:
        if self.url.startswith("postgres"):
            self.pg.commit()
            self.pg.close()
        else:
            self.lite.execute("COMMIT")
            self.lite.close()
