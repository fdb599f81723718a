"""The SQLite writer process, killed (SIGKILL, by itself) at one point of one batch.

Started in place of ``_writer_child.py`` (``_writer_process._CHILD``), with the same
arguments; runs the real child's code, loaded by path (``ASSAY_TEST_REAL_CHILD``).
``ASSAY_TEST_WRITER_FAULT`` is ``POINT:BATCH:MARKER``: the process dies at ``POINT`` of
its ``BATCH``-th transaction (from 0), once the next frame is in its input or read
ahead (so two batches are in flight when it dies); it first writes ``MARKER``: the point, the batch,
whether a frame was waiting, and how many rows it had committed. Points:

- ``received``: the batch read, nothing of it executed;
- ``inserted``: its rows inserted, before ``COMMIT``;
- ``committed``: committed, before its answer;
- ``answered``: its answer written, before the next frame is read.
"""

from __future__ import annotations

import importlib.util
import os
import select
import signal
import sys
import time
from typing import Any

POINTS = ("received", "inserted", "committed", "answered")


def load_real_child() -> Any:
    spec = importlib.util.spec_from_file_location(
        "assay_real_writer_child", os.environ["ASSAY_TEST_REAL_CHILD"]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Dying:
    """A connection that dies instead of committing."""

    def __init__(self, conn: Any, die: Any) -> None:
        self._conn, self._die = conn, die

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT":
            self._die()
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def main() -> None:
    point, batch, marker = os.environ["ASSAY_TEST_WRITER_FAULT"].split(":", 2)
    target = int(batch)
    child = load_real_child()
    real_commit, real_reply = child.commit, child.reply
    seen = [-1]  # the transaction being committed (from 0)
    committed = [0]  # rows

    prefetches: list[Any] = []
    real_prefetch = child.Prefetch

    def prefetch(*args: Any) -> Any:
        prefetches.append(real_prefetch(*args))
        return prefetches[-1]

    def next_frame_waits() -> bool:
        """Whether the next frame is read ahead, or in the pipe (waits for it, 30 s at most)."""
        poller = select.poll()
        poller.register(sys.stdin.fileno(), select.POLLIN)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if not prefetches[0]._ahead.empty() or poller.poll(1):
                return True
        return False

    def die() -> None:
        waiting = next_frame_waits()
        with open(marker, "w") as handle:
            handle.write(f"{point} {seen[0]} {'waiting' if waiting else 'alone'} {committed[0]}\n")
        os.kill(os.getpid(), signal.SIGKILL)

    def commit(conn: Any, statements: Any, rows: Any) -> Any:
        seen[0] += 1
        if seen[0] == target and point == "received":
            die()
        dying = seen[0] == target and point == "inserted"
        answer = real_commit(_Dying(conn, die) if dying else conn, statements, rows)
        if answer == ("ok",):
            committed[0] += sum(len(params) for sql, params, _ in statements if sql == rows.text.ROWS)
        if seen[0] == target and point == "committed":
            die()
        return answer

    def reply(stream: Any, message: Any) -> None:
        real_reply(stream, message)
        if point == "answered" and seen[0] == target and message == ("ok",):
            die()

    child.commit, child.reply, child.Prefetch = commit, reply, prefetch
    child.main(sys.argv[1], sys.argv[3])


if __name__ == "__main__":
    main()
