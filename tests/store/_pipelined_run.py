"""A real ``evaluate`` run that kills itself (SIGKILL) with two batches in flight to its
SQLite writer process. Run by test_pipelined_crash:

    python _pipelined_run.py DB POINT NTH MARKER

It dies the ``NTH`` time (from 0) it reaches ``POINT`` with two batches in flight:

- ``sent``: a batch handed over whole, the one before it not yet confirmed;
- ``half-sent``: half of a batch's frame written, the one before it not yet confirmed;
- ``collected``: a batch confirmed committed, the next one still in flight;
- ``taking-over``: its writer process found gone (``_faulty_writer_child`` killed it),
  before anything is checked or written again here.

First it writes ``MARKER``: the rows the store must then hold, those it wrote itself
(before its writer process was ready) and those it handed over whole; for
``taking-over``, the rows it wrote itself only (the test adds what the writer process
committed). With ``ASSAY_TEST_WRITER_FAULT`` set, its writer process is
``_faulty_writer_child``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from assay import Client, evaluate
from assay.store.sqlite import _writer, _writer_process


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"y": 2 * inputs["x"]}


def correct(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    return bool(outputs["y"] == reference_outputs["y"])


def die(marker: str, rows: int) -> None:
    with open(marker, "w") as handle:
        handle.write(f"{rows}\n")
    os.kill(os.getpid(), signal.SIGKILL)


def arm(point: str, nth: int, marker: str) -> None:
    """Patch the run's batch writer to die at ``point``."""
    batches = _writer.ProcessBatchWriter
    reached = [0]
    writing: list[Any] = []

    def at_point(writer: Any, rows: int) -> None:
        if len(writer._in_flight) >= 1 + (point != "collected"):
            if reached[0] == nth:
                die(marker, writer.rows_here + rows)
            reached[0] += 1

    def flown(writer: Any) -> int:
        return writer.rows_by_process + writer.rows_in_flight

    original_write, original_collect = batches.write, batches._collect_oldest
    original_frame, original_take_over = _writer_process.WriterProcess._write_frame, batches._take_over

    def write(self: Any, prepared: Any, stats: Any) -> None:
        writing[:] = [self]
        original_write(self, prepared, stats)
        if point == "sent":
            at_point(self, flown(self))

    def collect(self: Any) -> None:
        original_collect(self)
        if point == "collected":
            at_point(self, flown(self))

    def write_frame(self: Any, body: bytes, deadline: float) -> None:
        writer = writing[0] if writing else None
        if point == "half-sent" and writer is not None and len(writer._in_flight) == 2 and reached[0] == nth:
            header = len(body).to_bytes(8, "little")
            with contextlib.suppress(BlockingIOError):  # a full pipe: cut before it starts
                os.write(self._in, header + body[: len(body) // 2])  # a frame cut short
            die(marker, writer.rows_here + flown(writer) - len(writer._in_flight[-1][0]))
        if point == "half-sent" and writer is not None and len(writer._in_flight) == 2:
            reached[0] += 1
        original_frame(self, body, deadline)

    def take_over(self: Any) -> None:
        if point == "taking-over":
            die(marker, self.rows_here)
        original_take_over(self)

    original_expect = batches.expect

    def expect(self: Any, rows: int) -> None:
        """Every batch through the writer process: wait for it to be ready, however
        loaded the machine (an answer it sends, not a time)."""
        original_expect(self, rows)
        deadline = time.monotonic() + 120
        while self.process is not None and self.process.state() == "starting" and time.monotonic() < deadline:
            time.sleep(0.005)

    batches.expect = expect  # type: ignore[method-assign]
    batches.write, batches._collect_oldest = write, collect  # type: ignore[method-assign]
    batches._take_over = take_over  # type: ignore[method-assign]
    _writer_process.WriterProcess._write_frame = write_frame  # type: ignore[method-assign]


def main() -> None:
    db, point, nth, marker = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    client = Client(db)
    if "ASSAY_TEST_WRITER_FAULT" in os.environ:  # its writer process dies too
        _writer_process._CHILD = Path(__file__).with_name("_faulty_writer_child.py")
    arm(point, nth, marker)
    evaluate(
        target,
        data="piped",
        evaluators=[correct],
        experiment="piped",
        client=client,
        progress=False,
    )
    sys.exit("the run ended without reaching its kill point")


if __name__ == "__main__":
    main()
