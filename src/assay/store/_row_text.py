"""A row's fields as plain values, and their encoding into rows of the runs and results
tables.

The standard library only (the JSON functions are handed in), so that the SQLite writer
process, which loads this file by path, encodes a row with the very code the run's
process would: a run hands it a row's plain fields (pickled, a snapshot taken as
the row finished) and the encoding, most of a row's store-side CPU, happens on the
other core. Fields that are not plain data (a user's object, a NumPy array, a datetime
in an output) are encoded in the run's process instead, the same way (``_codec``).

Text columns hold any string: one that UTF-8 cannot carry (a lone surrogate, which an
honest JavaScript string reversal produces) is stored with ``\\udXXX`` escapes. A row
whose encoding fails all the same is stored as errored, with the reason, so one odd row
never stops an experiment.
"""

from __future__ import annotations

import functools
import operator
import pickle
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from itertools import chain
from typing import Any

RUN_COLUMNS = (
    "id, experiment_id, example_id, repetition, position, name, run_type, inputs, outputs, "
    "error, start_time, end_time, latency_ms, child_runs, extra"
)
RUN_WIDTH = 16  # with ``failed``
RESULT_COLUMNS = (
    "experiment_id, run_id, key, score, value, feedback, comment, correction, metadata, "
    "evaluator_info, error, score_kind, example_id, repetition, position"
)
RESULT_WIDTH = 15
_ROWS_PER_STATEMENT = 256

# A row's fields: (experiment id, run id, example id, repetition, position, name,
# run_type, inputs, outputs, error, start, end, latency ms, child runs (dicts, or the
# error that dumping them raised), extra, results),
# each result (key, score, value, feedback, comment, correction, metadata,
# evaluator_info, error). A time is microseconds since the epoch when it is in UTC,
# else its ISO text.
RowFields = tuple[Any, ...]
Encoded = tuple[tuple[Any, ...], list[tuple[Any, ...]]]

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
ROWS = "-- rows"  # a statement log's stand-in for a batch of rows to encode and insert


def instant(value: datetime | None) -> int | str | None:
    """A time as a row's fields carry it (see ``RowFields``)."""
    if value is None:
        return None
    if value.tzinfo is timezone.utc:
        return (value - EPOCH) // _MICROSECOND
    return value.isoformat()


def text(value: Any, safe_repr: Callable[[Any], str]) -> str | None:
    """A string SQLite takes: lone surrogates (which UTF-8 cannot carry) as ``\\udXXX``
    escapes; everything else, NUL included, exactly as it is."""
    if type(value) is str and value.isascii():  # the common case, first
        return value
    if value is None:
        return None
    if type(value) is not str:
        value = safe_repr(value)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return str(value)


def score_kind(score: Any) -> str | None:
    """What the REAL score column cannot say by itself: the score was a bool, or an int."""
    kind = type(score)
    if kind is bool:
        return "bool"
    if kind is float or score is None:
        return None
    if isinstance(score, bool):
        return "bool"
    if isinstance(score, int) and abs(score) <= 2**53:  # exact as a float, so exact back
        return "int"
    return None


class RowEncoder:
    """Encodes ``RowFields`` with the store's JSON (``dumps``, ``safe_repr``, from
    ``_json``)."""

    def __init__(self, dumps: Callable[[Any], str | None], safe_repr: Callable[[Any], str]) -> None:
        self.dumps = dumps
        self.safe_repr = safe_repr
        self._second = _second_text(0)  # the last whole second's text: rows share it

    def instant_text(self, value: int | str | None) -> str | None:
        """A time's ISO text, as ``datetime.isoformat`` writes it."""
        if value is None or isinstance(value, str):
            return value
        second, micro = divmod(value, 1_000_000)
        cached = self._second  # one tuple, replaced whole: safe from any thread
        if cached[0] != second:
            cached = self._second = _second_text(second)
        return f"{cached[1]}.{micro:06d}+00:00" if micro else cached[2]

    def text(self, value: Any) -> str | None:
        if type(value) is str and value.isascii():  # most names and keys: no second call
            return value
        return text(value, self.safe_repr)

    def extra_text(self, extra: dict[str, Any] | None) -> str | None:
        """A run's ``extra``: most rows' is their repetition alone, written as ``dumps``
        writes it without the walk."""
        if not extra:
            return None
        if len(extra) == 1 and type(repetition := extra.get("repetition")) is int and 0 <= repetition < 2**63:
            return f'{{"repetition":{repetition}}}'
        return self.dumps(extra)

    def encoded(self, prepared: bytes | Encoded) -> Encoded:
        """A row as a store's ``prepare_row`` gave it (pickled ``RowFields``, or already
        encoded), encoded."""
        if type(prepared) is bytes:
            return self.encode(pickle.loads(prepared))
        return prepared  # type: ignore[return-value]

    def encode(self, fields: RowFields) -> Encoded:
        """The run's row (its last column: whether the row failed, ``failed``) and its
        results' rows. A part that cannot be encoded is replaced by an errored row saying
        why; the others are stored as they are."""
        experiment_id, run_id, example_id, repetition, position = fields[:5]
        pair = (example_id, repetition, position)
        failed = fields[9] is not None
        results = []
        for result in fields[15]:
            score, error = result[1], result[8]
            if not failed and (error is not None or (score is not None and score < 1)):
                failed = True
            try:
                results.append(self.result_row(experiment_id, run_id, result, pair))
            except Exception as exc:  # noqa: BLE001 - a row must never stop the experiment
                key = self.text(str(result[0]))
                reason = self.reason(exc)
                results.append((experiment_id, run_id, key, *(None,) * 7, reason, None, *pair))
        try:
            run = self.run_row(fields, int(failed))
        except Exception as exc:  # noqa: BLE001
            run = self._errored_run_row(fields, self.reason(exc), int(failed))
        return run, results

    def run_row(self, fields: RowFields, failed: int) -> tuple[Any, ...]:
        experiment_id, run_id, example_id, repetition, position, name, run_type = fields[:7]
        inputs, outputs, error, start, end, latency, children, extra = fields[7:15]
        if isinstance(children, Exception):  # the child runs could not be dumped
            raise children
        dumps = self.dumps
        return (  # one tuple, the runs table's columns in order (``RUN_COLUMNS``, ``failed``)
            run_id,
            experiment_id,
            example_id,
            repetition,
            position,
            self.text(name),
            self.text(run_type),
            dumps(inputs),
            dumps(outputs),
            None if error is None else self.text(error),
            self.instant_text(start),
            self.instant_text(end),
            latency,
            None if children is None else dumps(children),
            self.extra_text(extra),
            failed,
        )

    def result_row(
        self, experiment_id: str, run_id: str, result: tuple[Any, ...], pair: tuple[str, int, int]
    ) -> tuple[Any, ...]:
        """``pair`` is the run's (example id, repetition, position): a copy on each result, so
        that a comparison pairs two experiments' scores, and a sorted page reads a metric's
        rows in order, from one index without visiting the runs."""
        key, score, value, feedback, comment, correction, metadata, info, error = result
        dumps = self.dumps
        return (  # most fields are None: checked inline, a call each costs more than the test
            experiment_id,
            run_id,
            self.text(key),
            None if score is None else float(score),
            None if value is None else dumps(value),
            None if feedback is None else self.text(feedback),
            None if comment is None else self.text(comment),
            None if correction is None else dumps(correction),
            dumps(metadata) if metadata else None,
            dumps(info) if info else None,
            None if error is None else self.text(error),
            score_kind(score),
            *pair,
        )

    def reason(self, exc: BaseException) -> str:
        return self.text(f"this row could not be stored: {type(exc).__name__}: {self.safe_repr(exc)}") or ""

    def _errored_run_row(self, fields: RowFields, reason: str, failed: int) -> tuple[Any, ...]:
        experiment_id, run_id, example_id, repetition, position, name, run_type = fields[:7]
        start, end = fields[10:12]
        key = (run_id, experiment_id, example_id, repetition, position)
        texts = (self.text(str(name)), self.text(str(run_type)), None, None, reason)
        return (*key, *texts, self.instant_text(start), self.instant_text(end), None, None, None, failed)


def _second_text(second: int) -> tuple[int, str, str]:
    """A whole second since the epoch, its ISO text without the offset, and with it."""
    text = (EPOCH + timedelta(seconds=second)).isoformat()
    return second, text[:-6], text


# Columns most rows leave NULL: a run's error and child runs; a result's value, feedback,
# comment, correction, metadata, evaluator info and error. A statement whose rows all
# leave them NULL writes them as NULL literals instead of binding ``None``: the sqlite3
# module binds an int or a string at once, but ``None`` only after looking its type up
# as one to adapt (~0.25-0.8 us each, ~16 a row of the core benchmark). One lean
# statement a table and size at most, so the statements cached stay few.
RUN_USUALLY_NULL = (9, 13)
RESULT_USUALLY_NULL = (4, 5, 6, 7, 8, 9, 10)


@functools.lru_cache(maxsize=64)
def _insert_sql(table: str, columns: str, width: int, rows: int, nulls: tuple[int, ...] = ()) -> str:
    one = "(" + ", ".join("NULL" if i in nulls else "?" for i in range(width)) + ")"
    return f"INSERT INTO {table} ({columns}) VALUES " + ", ".join([one] * rows)


@functools.lru_cache(maxsize=16)
def _getter(indexes: tuple[int, ...]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """The values at ``indexes`` of a row, as a tuple (however many)."""
    if len(indexes) == 1:
        (index,) = indexes
        return lambda row: (row[index],)
    return operator.itemgetter(*indexes)


def _all_null(chunk: Sequence[tuple[Any, ...]], nulls: tuple[int, ...]) -> bool:
    """Whether every row of ``chunk`` is None at each of ``nulls``."""
    nothing = (None,) * len(nulls)
    return all(map(nothing.__eq__, map(_getter(nulls), chunk)))


def _params(chunk: Sequence[tuple[Any, ...]], width: int, nulls: tuple[int, ...]) -> list[Any]:
    if not nulls:
        return list(chain.from_iterable(chunk))
    kept = tuple(i for i in range(width) if i not in nulls)
    return list(chain.from_iterable(map(_getter(kept), chunk)))


def insert_many(
    conn: sqlite3.Connection,
    table: str,
    columns: str,
    width: int,
    rows: Sequence[tuple[Any, ...]],
    usually_null: tuple[int, ...] = (),
) -> None:
    """Multi-row ``INSERT ... VALUES (...), (...)`` statements: one ``sqlite3_step`` (and
    one release of the GIL) per few hundred rows instead of one per row. Of power-of-two
    row counts only: the connection caches each distinct statement, and one per batch
    size (a timer cuts batches at any size) held ~1 MB each, growing memory with every
    batch. ``usually_null``: columns to write as NULL literals when every row of a
    statement leaves them NULL (see ``RUN_USUALLY_NULL``). A connection that copies rows
    in bulk (PostgreSQL's ``COPY``: one round trip, no statement per row) takes them all
    at once instead."""
    copy_rows = getattr(conn, "copy_rows", None)
    if copy_rows is not None:
        copy_rows(table, columns, rows)
        return
    start = 0
    while start < len(rows):
        size = min(_ROWS_PER_STATEMENT, 1 << ((len(rows) - start).bit_length() - 1))
        chunk = rows[start : start + size]
        nulls = usually_null if usually_null and _all_null(chunk, usually_null) else ()
        conn.execute(_insert_sql(table, columns, width, size, nulls), _params(chunk, width, nulls))
        start += size


def insert_encoded(conn: sqlite3.Connection, encoded: Sequence[Encoded]) -> None:
    runs = [run for run, _ in encoded]
    results = [result for _, row_results in encoded for result in row_results]
    insert_many(conn, "runs", RUN_COLUMNS + ", failed", RUN_WIDTH, runs, RUN_USUALLY_NULL)
    insert_many(conn, "results", RESULT_COLUMNS, RESULT_WIDTH, results, RESULT_USUALLY_NULL)
