"""Shard slices and the lease SQL on a real SQLite file, two store objects standing in for
two processes (the CLI tests run real ones)."""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from assay import Client, evaluate
from assay.errors import LeaseLostError
from assay.evaluation._feed import RowFeed
from assay.evaluation._lease import ShardLease
from assay.evaluation._shard import Shard, ShardError, shard_argument
from assay.schemas import Example
from assay.store.records import ExperimentRecord
from assay.store.sqlite import SQLiteStore


def planned(shard: Shard, examples: int, repetitions: int, done: set[int] | None = None) -> list[int]:
    items = [Example(inputs={"i": i}) for i in range(examples)]
    total = shard.rows_of(examples * repetitions)
    feed = RowFeed(items, repetitions, done or set(), total, shard)
    rows = []
    while (row := feed.next()) is not None:
        rows.append(row.position * repetitions + row.repetition)
    assert feed.remaining == 0  # the feed's count agrees with what it fed
    return rows


@pytest.mark.parametrize("repetitions", [1, 3])
@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_shards_partition_the_rows_evenly(count: int, repetitions: int) -> None:
    examples = 7
    slices = [planned(Shard(i, count), examples, repetitions) for i in range(count)]
    every = sorted(index for rows in slices for index in rows)
    assert every == list(range(examples * repetitions))  # each row in exactly one shard
    sizes = [len(rows) for rows in slices]
    assert max(sizes) - min(sizes) <= 1
    # Deterministic: the same slice every time, whatever else was stored.
    assert planned(Shard(count - 1, count), examples, repetitions) == slices[-1]


def test_a_resumed_shard_plans_only_its_rows_not_stored_yet() -> None:
    shard = Shard(1, 3)
    mine = planned(shard, 10, 2)
    done = {mine[0], mine[2]}
    total = shard.rows_of(20)
    feed = RowFeed([Example(inputs={"i": i}) for i in range(10)], 2, done, total, shard)
    assert feed.remaining == len(mine) - 2
    fed = []
    while (row := feed.next()) is not None:
        fed.append(row.position * 2 + row.repetition)
    assert fed == [index for index in mine if index not in done]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            (3, 3),
            "shard=(3, 3): the index of the pair counts from 0 (as Python indexes do), so it must be 0 to 2",
        ),
        ((0, 0), "shard=(0, 0): the shard count must be at least 1"),
        ((-1, 2), "must be 0 to 1"),
        ("a/b", "shard= 'a/b': write I/N"),
        ((True, 2), "shard= takes a pair (index from 0, count)"),
        (3, "shard= takes a pair (index from 0, count)"),
        ("0/3", "shard= '0/3': shards count from 1"),
    ],
)
def test_bad_shards_name_the_parameter(given: object, message: str) -> None:
    with pytest.raises(ShardError) as caught:
        shard_argument(given)
    assert message in str(caught.value)


def test_the_pair_counts_from_0_and_the_command_line_text_from_1() -> None:
    """Python's pair indexes as Python does; ``"I/N"`` is the command line's, as Playwright's."""
    assert [shard_argument(f"{i}/3") for i in (1, 2, 3)] == [shard_argument((i, 3)) for i in (0, 1, 2)]
    assert [str(shard_argument((i, 3))) for i in (0, 1, 2)] == ["1/3", "2/3", "3/3"]
    with pytest.raises(ShardError, match="must be 1 to 3: 1/3, 2/3, 3/3"):
        shard_argument("0/3")
    with pytest.raises(ShardError, match=r"\(0, 3\) is --shard 1/3"):
        shard_argument((3, 3))


def test_a_sharded_evaluate_needs_a_shared_stored_experiment(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "db.sqlite"))
    data = [{"inputs": {"x": 1}}]
    with pytest.raises(ValueError, match=r"shard=\(0, 2\) needs experiment='<name>'"):
        evaluate(lambda inputs: inputs, data=data, shard=(0, 2), client=client)
    with pytest.raises(ValueError, match="cannot go with upload_results=False"):
        evaluate(lambda inputs: inputs, data=data, shard=(0, 2), experiment="e", upload_results=False)
    with pytest.raises(ShardError, match="must be 0 to 1"):
        evaluate(lambda inputs: inputs, data=data, shard=(2, 2), experiment="e", client=client)
    assert client.list_experiments() == []  # refused before anything was stored


@pytest.fixture
def stores(tmp_path: Path) -> tuple[SQLiteStore, SQLiteStore, uuid.UUID]:
    first, second = SQLiteStore(tmp_path / "db.sqlite"), SQLiteStore(tmp_path / "db.sqlite")
    record = ExperimentRecord(name="split", config={"shards": 2})
    first.create_experiment(record)
    return first, second, record.id


def take(
    store: SQLiteStore, experiment: uuid.UUID, token: str, ttl: float = 30, shard: int = 0, **kw: str
) -> str:
    return store.take_lease(experiment, shard, 2, host="h", pid=1, token=token, ttl=ttl, **kw).token


def test_a_live_lease_is_refused_an_expired_one_taken_over(
    stores: tuple[SQLiteStore, SQLiteStore, uuid.UUID],
) -> None:
    first, second, experiment = stores
    clock = [1_000_000.0]  # injected: expiry follows this clock, not the machine's speed
    first.lease_clock = second.lease_clock = lambda: clock[0]
    assert take(first, experiment, "a", ttl=0.3) == "a"
    assert take(second, experiment, "b") == "a"  # live: b is told who holds it
    clock[0] += 0.29
    assert take(second, experiment, "b") == "a"  # still live, just before its expiry
    assert take(first, experiment, "a", ttl=0.3) == "a"  # the holder may take it again
    assert first.renew_lease(experiment, 0, "a", 0.3)
    clock[0] += 0.31
    assert take(second, experiment, "b") == "b"  # expired: taken over
    assert not first.renew_lease(experiment, 0, "a", 30)  # the old holder learns it lost it
    assert first.finish_shard(experiment, 0, "a") is None
    assert take(first, experiment, "c", stale_token="x") == "b"  # a wrong stale token takes nothing
    assert take(first, experiment, "c", stale_token="b") == "c"  # a holder known dead is replaced


def test_finishing_shards_counts_them_and_marks_the_experiment_partial(
    stores: tuple[SQLiteStore, SQLiteStore, uuid.UUID],
) -> None:
    first, second, experiment = stores
    take(first, experiment, "a", shard=0)
    take(second, experiment, "b", shard=1)
    assert first.finish_shard(experiment, 0, "a") == (1, 2)
    record = second.get_experiment(id=experiment)
    assert record is not None and record.status == "partial"
    assert take(second, experiment, "c", shard=0) == "c"  # a finished shard's lease is free at once
    second.release_lease(experiment, 0, "c", "interrupted")
    assert [lease.state for lease in first.list_leases(experiment)] == ["interrupted", "running"]
    assert second.finish_shard(experiment, 1, "b") == (1, 2)  # shard 0 must run again to count
    take(first, experiment, "d", shard=0)
    assert first.finish_shard(experiment, 0, "d") == (2, 2)
    assert [lease.state for lease in second.list_leases(experiment)] == ["done", "done"]


def test_a_shard_resume_discards_only_its_own_failed_rows(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "db.sqlite"))
    data = [{"inputs": {"x": i}} for i in range(6)]

    def flaky(inputs: dict) -> dict:
        raise RuntimeError("down")

    for i in (0, 1):
        evaluate(flaky, data=data, experiment="split", shard=(i, 2), client=client, progress=False)
    record = client.store.get_experiment(name="split")
    assert record is not None
    assert client.store.discard_failed_runs(record.id, (1, 2)) == 3
    assert sorted(position for position, _ in client.store.stored_keys(record.id)) == [0, 2, 4]


class _LastShardMeanwhile(SQLiteStore):
    """A real store whose first read of the experiment after this shard finished waits
    while another process-like client runs the other shard to the end: the window in
    which an earlier shard could mistake itself for the last one."""

    other: Any = None

    def finish_shard(
        self, experiment_id: uuid.UUID, shard: int, token: str, *, completes: bool = False
    ) -> tuple[int, int] | None:
        outcome = super().finish_shard(experiment_id, shard, token, completes=completes)
        if self.other is not None:
            other, self.other = self.other, None
            worker = threading.Thread(target=other)
            worker.start()
            worker.join()
        return outcome


def test_an_earlier_shard_never_reports_the_experiment_complete(tmp_path: Path) -> None:
    path = str(tmp_path / "db.sqlite")
    data = [{"inputs": {"x": i}} for i in range(6)]
    store = _LastShardMeanwhile(path)

    def last_shard() -> None:
        evaluate(
            lambda inputs: inputs,
            data=data,
            experiment="split",
            shard=(1, 2),
            client=Client(path),
            progress=False,
        )

    store.other = last_shard
    first = evaluate(
        lambda inputs: inputs,
        data=data,
        experiment="split",
        shard=(0, 2),
        client=Client(store=store),
        progress=False,
    )
    assert first.experiment.status == "partial"  # the CLI judges the gates only when "completed"
    final = Client(path).store.get_experiment(name="split")
    assert final is not None and final.status == "completed"


def test_a_new_run_commits_once_before_its_first_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Creating the experiment and taking its lease are one transaction (each commit
    waits for the disk): counted on the real store, up to the first row's start."""
    client = Client(str(tmp_path / "start.db"))
    client.create_dataset("start")
    client.create_examples(inputs=[{"x": i} for i in range(3)], dataset_name="start")
    transactions: list[str] = []
    at_first_row: list[int] = []
    original = SQLiteStore.transaction

    def counted(self: SQLiteStore) -> Any:
        transactions.append("begin")
        return original(self)

    monkeypatch.setattr(SQLiteStore, "transaction", counted)

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        if not at_first_row:
            at_first_row.append(len(transactions))
        return inputs

    client.evaluate(target, data="start", experiment="one-commit", max_concurrency=1)
    assert at_first_row == [1]
    leases = client.store.list_leases(client.store.get_experiment(name="one-commit").id)  # type: ignore[union-attr]
    assert [(lease.state, lease.pid) for lease in leases] == [("done", os.getpid())]


def test_a_whole_run_completes_in_the_transaction_that_ends_its_lease(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end of a whole run is one commit (each waits for the disk): its lease done and
    the experiment completed together, after its summaries, with no finish of its own."""
    client = Client(str(tmp_path / "end.db"))
    left_by_lease_end: list[str] = []
    finished: list[str] = []
    finish_shard, finish_experiment = SQLiteStore.finish_shard, SQLiteStore.finish_experiment

    def ending(self: SQLiteStore, experiment: uuid.UUID, *args: Any, **kwargs: Any) -> Any:
        outcome = finish_shard(self, experiment, *args, **kwargs)
        left_by_lease_end.append(self.get_experiment(id=experiment).status)  # type: ignore[union-attr]
        return outcome

    def finishing(self: SQLiteStore, experiment: uuid.UUID, status: str, *args: Any) -> None:
        finished.append(status)
        finish_experiment(self, experiment, status, *args)

    monkeypatch.setattr(SQLiteStore, "finish_shard", ending)
    monkeypatch.setattr(SQLiteStore, "finish_experiment", finishing)

    def rows(runs: list[Any], examples: list[Any]) -> int:
        return len(runs)

    results = client.evaluate(
        lambda inputs: inputs, data=[{"x": i} for i in range(4)], summary_evaluators=[rows], experiment="end"
    )
    assert left_by_lease_end == ["completed"] and finished == []
    stored = client.store.get_experiment(name="end")
    assert stored is not None and stored.status == "completed" and stored.finished_at is not None
    assert [r.score for r in results.summary_results.results] == [4]
    assert [lease.state for lease in client.store.list_leases(stored.id)] == ["done"]


class HeldHeartbeat(threading.Event):
    """A lease's stop event whose waits in the heartbeat thread return only once ``go`` is
    set (as if the OS had not scheduled that thread yet), or at once when ``beat`` is set
    (the time to renew came); each wake-up is noted in ``order``."""

    def __init__(self, order: list[str]) -> None:
        super().__init__()
        self.order, self.go, self.beat, self.woke = (
            order,
            threading.Event(),
            threading.Event(),
            threading.Event(),
        )

    def wait(self, timeout: float | None = None) -> bool:
        if not self.beat.is_set():
            self.go.wait(10)  # only the old code waits here: it waited for this thread to end
        self.beat.clear()
        self.order.append("heartbeat woke")
        self.woke.set()
        return self.is_set()


def held_lease(
    store: SQLiteStore, experiment: uuid.UUID, order: list[str]
) -> tuple[ShardLease, HeldHeartbeat]:
    record = store.get_experiment(id=experiment)
    assert record is not None
    shard = Shard(0, 2)
    lease = ShardLease(store, record, shard, ShardLease.claim(shard))
    lease._acquire(wait=False)
    held = lease._stop = HeldHeartbeat(order)
    return lease, held


def test_ending_a_lease_does_not_wait_for_its_heartbeat_thread(
    stores: tuple[SQLiteStore, SQLiteStore, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heartbeat sleeps between renewals; ending the lease stops it without waiting
    for the OS to schedule it (a hand-off, up to 16 ms of a run's end on a loaded machine)."""
    store, _, experiment = stores
    order: list[str] = []
    lease, held = held_lease(store, experiment, order)
    finish_shard = store.finish_shard

    def finishing(*args: Any, **kwargs: Any) -> Any:
        order.append("lease ended")
        held.go.set()
        return finish_shard(*args, **kwargs)

    monkeypatch.setattr(store, "finish_shard", finishing)
    lease._start_heartbeat()
    assert lease.finish() == (1, 2)
    held.woke.wait()
    assert order == ["lease ended", "heartbeat woke"]  # the old code: the other way round


def test_ending_a_lease_waits_for_a_renewal_under_way_and_its_news(
    stores: tuple[SQLiteStore, SQLiteStore, uuid.UUID], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A renewal that began before the lease was ended is over before it ends; one that
    found the lease lost makes ``finish`` raise, as it did when it waited for the thread."""
    store, _, experiment = stores
    order: list[str] = []
    lease, held = held_lease(store, experiment, order)
    renewing = threading.Event()

    def renew(*args: Any) -> bool:
        renewing.set()
        held.go.wait()  # until the lease is being ended
        order.append("renewal found the lease lost")
        return False

    finish_shard = store.finish_shard

    def finishing(*args: Any, **kwargs: Any) -> Any:
        order.append("lease ended")
        return finish_shard(*args, **kwargs)

    stop = held.set

    def stopping() -> None:
        stop()
        held.go.set()

    monkeypatch.setattr(store, "renew_lease", renew)
    monkeypatch.setattr(store, "finish_shard", finishing)
    monkeypatch.setattr(held, "set", stopping)
    held.beat.set()  # the time to renew has come
    lease._start_heartbeat()
    renewing.wait()
    with pytest.raises(LeaseLostError):
        lease.finish()
    assert order == ["heartbeat woke", "renewal found the lease lost", "lease ended"]
    assert lease.lost
