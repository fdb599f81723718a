"""How a shard ends, and how a split experiment's progress reads.

Each shard writes only its rows; the experiment's stored figures (experiment_stats,
metric_stats), its summary evaluators and its ``completed`` status come from the shard
that finishes last, computed from every shard's stored rows. Until then the experiment
is ``partial`` and its figures are not stored (readers tally the stored rows).
"""

from __future__ import annotations

import contextlib
import time

from assay.errors import LeaseFencedError
from assay.evaluation._experiment import stored_shards
from assay.evaluation._lease import LeaseLostError, ShardLease
from assay.evaluation._shard import Shard, shard_text
from assay.evaluation._tally import tally_of_stored
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentStats

__all__ = ["end_shard", "fenced", "release_quietly", "shard_line", "shard_progress", "shard_rows_stored"]


def end_shard(
    store: Store, experiment: ExperimentRecord, lease: ShardLease, stats: ExperimentStats
) -> tuple[ExperimentStats, bool]:
    """Mark the shard done: (the figures to report, whether every shard is now done).

    A whole run's figures are its own; a split experiment's are tallied from the store,
    and stored by the last shard only (an earlier shard's could overwrite the final ones)."""
    done, count = lease.finish()
    if count == 1:
        return stats, True
    complete = done >= count
    figures = tally_of_stored(store.iter_scores(experiment.id)).stats(final=complete)
    if complete:
        store.write_stats(experiment.id, figures, lease.fence)
    return figures, complete


def fenced(exc: BaseException) -> bool:
    """Whether ``exc`` comes of a write the store refused: the run's lease was taken over."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, (LeaseFencedError, LeaseLostError)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def release_quietly(lease: ShardLease, state: str) -> None:
    """End the lease of a run that failed; if the store cannot be reached, the lease
    expires by itself, and the run's own error is the one to report."""
    with contextlib.suppress(Exception):
        lease.release(state)


def shard_rows_stored(store: Store, experiment: ExperimentRecord, shard: Shard) -> int:
    """How many of the shard's own rows are stored (an interrupted shard reports these)."""
    reps = experiment.num_repetitions
    return sum(shard.holds(p * reps + r) for p, r in store.stored_keys(experiment.id))


def shard_progress(store: Store, experiment: ExperimentRecord) -> str | None:
    """``2/3 shards done; shard 1 running (pid 42 on ci-7)`` for a split experiment, else None."""
    count = stored_shards(experiment)
    if count == 1:
        return None
    leases = store.list_leases(experiment.id)
    now = time.time()
    done = sum(lease.state == "done" for lease in leases)
    notes = []
    for lease in leases:
        if lease.state == "running" and lease.live(now):
            notes.append(f"shard {shard_text(lease.shard, count)} running ({lease.holder})")
        elif lease.state == "running":
            notes.append(f"shard {shard_text(lease.shard, count)} stopped without finishing ({lease.holder})")
        elif lease.state != "done":
            notes.append(f"shard {shard_text(lease.shard, count)} {lease.state}")
    waiting = count - len(leases)
    if waiting:
        notes.append(f"{waiting} not started")
    return f"{done}/{count} shards done" + (f"; {', '.join(notes)}" if notes else "")


def shard_line(store: Store, experiment: ExperimentRecord, shard: Shard) -> str:
    """What a shard's process prints when it ends."""
    progress = shard_progress(store, experiment) or ""
    if experiment.status == "completed":
        return f"shard {shard} done, the last one: experiment {experiment.name!r} is complete ({progress})"
    return (
        f"shard {shard} done; experiment {experiment.name!r} is partial ({progress}): it completes, "
        "with its summary metrics and stored figures, when the last shard finishes"
    )
