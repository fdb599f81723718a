"""``RowFeed``: rows handed out from a queue planned ahead, without a lock per row.

A thread reading the next page of examples (a store read, a decode) no longer holds
back threads asking for rows already planned; every row is still handed out exactly
once, in plan order, and the feed's hooks are called once each."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from assay.evaluation._feed import RowFeed
from assay.schemas import Example

# A failure bound only: a passing run never waits for it (events, not sleeps).
_STUCK_S = 10.0


def _examples(count: int) -> list[Example]:
    return [Example(inputs={"i": i}) for i in range(count)]


def test_a_thread_reading_the_plan_does_not_hold_back_rows_already_planned() -> None:
    """The examples' iterator stalls on its 17th example (a page read that waits for
    the disk): the thread reading it waits, and another thread still gets a row
    planned before. Before, one lock covered the plan, read a row at a time: every
    thread asking meanwhile waited for the read."""
    reading, release = threading.Event(), threading.Event()

    def stalling() -> Iterator[Example]:
        for i, example in enumerate(_examples(40)):
            if i == 16:
                reading.set()
                release.wait(_STUCK_S)
            yield example

    feed = RowFeed(stalling(), 1, set(), total=40)
    taken: list[int] = []

    def take_until_the_read_stalls() -> None:
        while not reading.is_set() and (row := feed.next()) is not None:
            taken.append(row.position)

    taker = threading.Thread(target=take_until_the_read_stalls)
    taker.start()
    assert reading.wait(_STUCK_S)  # the taker is inside next(), reading the 17th example
    got: list[int] = []
    other = threading.Thread(target=lambda: got.append(feed.next().position))  # type: ignore[union-attr]
    other.start()
    other.join(_STUCK_S)
    stalled = not release.is_set() and taker.is_alive()
    release.set()
    taker.join()
    assert stalled and len(got) == 1 and got[0] < 16, (got, taken)
    rest = [row.position for row in iter(feed.next, None)]
    assert sorted(taken + got + rest) == list(range(40))


def test_every_row_is_handed_out_once_in_order_across_threads() -> None:
    feed = RowFeed(_examples(3_000), 2, {5, 6, 7}, total=6_000)
    ending: list[int] = []
    empty: list[int] = []
    feed.on_ending, feed.ending_at = lambda: ending.append(feed.remaining), 100
    feed.on_empty = lambda: empty.append(feed.remaining)
    handed: list[list[tuple[int, int]]] = [[] for _ in range(16)]
    floor_broken: list[int] = []

    def worker(mine: list[tuple[int, int]]) -> None:
        while (row := feed.next()) is not None:
            mine.append((row.position, row.repetition))
            if feed.remaining < 0:
                floor_broken.append(feed.remaining)

    threads = [threading.Thread(target=worker, args=(mine,)) for mine in handed]
    for thread in threads:
        thread.start()
    feed.plan_ahead(64)  # as the ramp does for threads it starts, meanwhile
    for thread in threads:
        thread.join()
    every = sorted(row for mine in handed for row in mine)
    assert every == [(i // 2, i % 2) for i in range(6_000) if i not in {5, 6, 7}]
    assert all(mine == sorted(mine) for mine in handed)  # each thread's rows in plan order
    assert len(ending) == 1 and 0 <= ending[0] <= 100
    assert empty == [0] and feed.remaining == 0 and feed.exhausted
    assert not floor_broken


def test_the_loop_tops_the_queue_up_when_asked() -> None:
    """With ``top_up_by`` (the event loop's thread, in a run of many threads), the
    asking thread only asks; the plan is read where it is handed."""
    asked: list[object] = []
    feed = RowFeed(_examples(10), 1, set(), total=10)
    feed.top_up_by = asked.append
    assert feed.next().position == 0  # type: ignore[union-attr]  # planned itself: nothing was ready
    assert len(asked) == 1
    assert feed.next().position == 1  # type: ignore[union-attr]  # waits, then plans itself
    assert len(asked) == 1  # asked once until the loop did it
    asked.pop()()  # the loop's turn: tops up
    assert feed.next().position == 2  # type: ignore[union-attr]
    positions = [row.position for row in iter(feed.next, None)]
    assert positions == list(range(3, 10))


def test_a_stopped_feed_hands_out_nothing_more() -> None:
    feed = RowFeed(_examples(50), 1, set(), total=50)
    feed.plan_ahead(20)
    assert feed.next() is not None
    feed.stop()
    assert feed.next() is None and feed.exhausted


def test_a_plan_that_fails_where_the_loop_reads_it_fails_the_threads_asking_next() -> None:
    """The loop's thread tops the queue up; the store fails on a page. Rows planned
    before it are handed out, then the failure reaches a thread (and so the run),
    never an early end of rows that reads as a finished run. (Rows read in the failed
    refill are not handed out: the run fails anyway.)"""

    def failing() -> Iterator[Example]:
        yield from _examples(6)
        raise OSError("disk I/O error")

    feed = RowFeed(failing(), 1, set(), total=20)
    feed.top_up_by = lambda top_up: top_up()  # the loop's turn, at once
    handed: list[int] = []
    with pytest.raises(OSError, match="disk I/O error"):
        while (row := feed.next()) is not None:
            handed.append(row.position)
    assert handed == list(range(len(handed))) and len(handed) <= 6
    with pytest.raises(OSError, match="disk I/O error"):  # and every thread after it
        feed.next()


def test_an_interrupt_while_the_loop_plans_reaches_the_loop() -> None:
    """The loop's callbacks keep a failing plan for the threads; a Ctrl-C raised in
    them (asyncio raises it wherever the main thread is) goes on to the loop, which
    stops the run, instead of surfacing later in some row thread."""

    def interrupted() -> Iterator[Example]:
        yield from _examples(2)
        raise KeyboardInterrupt

    feed = RowFeed(interrupted(), 1, set(), total=20)
    with pytest.raises(KeyboardInterrupt):
        feed.plan_ahead_quietly(10)
    feed = RowFeed(interrupted(), 1, set(), total=20)
    feed.top_up_by = lambda top_up: top_up()  # the loop's turn, at once
    with pytest.raises(KeyboardInterrupt):
        while feed.next() is not None:
            pass


def test_a_plan_that_fails_in_a_threads_own_top_up_does_not_drop_the_row_it_holds() -> None:
    """With few threads each tops the queue up itself, after taking its row: when the plan
    fails then, the thread still hands out its row, and the failure reaches the next
    thread asking."""

    def failing() -> Iterator[Example]:
        yield from _examples(3)
        raise OSError("disk I/O error")

    feed = RowFeed(failing(), 1, set(), total=20)
    handed: list[int] = []
    with pytest.raises(OSError, match="disk I/O error"):
        while (row := feed.next()) is not None:
            handed.append(row.position)
    # Row 1 was taken as the refill failed (the old code dropped it); row 2 was read by
    # the refill that failed, and is not handed out: the run fails anyway.
    assert handed == [0, 1]


def test_a_first_wave_planned_ahead_leaves_later_top_ups_their_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ramp's first wave is planned as the first row starts, for threads that may
    never come (rows that compute keep one or two): later top-ups still read at most
    twice ``_AHEAD // 2`` rows at once, as without it, so a run of large examples holds
    no more of them in memory. ``plan_ahead``, for threads being started, raises them."""
    reads: list[int] = []
    plan_more = RowFeed._plan_more

    def noted(feed: RowFeed, wanted: int) -> None:
        reads.append(wanted)
        plan_more(feed, wanted)

    monkeypatch.setattr(RowFeed, "_plan_more", noted)
    feed = RowFeed(iter(_examples(2000)), 1, set(), total=2000)
    feed.plan_ahead_quietly(256)
    assert reads == [256]
    rows = [row.position for row in iter(feed.next, None)]
    assert rows == list(range(2000))
    assert max(reads[1:]) <= RowFeed._AHEAD, reads
