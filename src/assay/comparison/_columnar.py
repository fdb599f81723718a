"""The paired sums of ``store.read.pairing`` computed from stored metric columns with numpy.

Same rules, same numbers as the SQL (``_PAIRED_ROWS`` without repetitions,
``_PAIRED_EXAMPLES`` with them, ``_DIFFERENCES``), but each side is two blob reads and the
pairing is vectorized: identical example-id columns are aligned as they are, others by
searching one side's sorted keys for the other's. Without repetitions a row pairs with
every result of the other side on its (example, repetition), as the SQL join does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.store import _columns as stored
from assay.store._columns import ERRORED, SCORED
from assay.store.read.pairing import EPSILON, PairedSums

_ABSENT = 3  # the outcome of a row the other side does not have


@dataclass(frozen=True)
class Side:
    """One experiment's columns of one metric, as arrays."""

    ids: NDArray[Any]
    repetitions: NDArray[np.int32]
    scores: NDArray[np.float64]
    outcomes: NDArray[np.int8]
    aligned: bool = False  # the other side has the same unique keys (ids left unread)

    @classmethod
    def of(cls, column: stored.MetricColumns, *, aligned: bool = False) -> Side:
        return cls(
            np.frombuffer(column.example_ids, dtype=f"S{column.id_width}"),
            np.frombuffer(column.repetitions, dtype=np.int32),
            np.frombuffer(column.scores, dtype=np.float64),
            np.frombuffer(column.outcomes, dtype=np.int8),
            aligned,
        )


@dataclass(frozen=True)
class PerExample:
    """A side's scored results averaged per example, in example order."""

    ids: NDArray[Any]
    means: NDArray[np.float64]
    counts: NDArray[np.int64]


class ColumnPair:
    """Two experiments' stored columns, read metric by metric."""

    def __init__(self, conn: Any, a: str, b: str, sets: tuple[stored.ColumnSet, stored.ColumnSet]) -> None:
        self._conn, self._ids, self._sets = conn, (a, b), sets
        self.repeated = sets[0].repeated or sets[1].repeated

    def sides(self, key: str) -> tuple[Side, Side] | None:
        """Both sides' columns of ``key``, or None when their id formats differ. Without
        repetitions, equal unique keys on both sides (the usual case: one result per row
        of one dataset) pair row i with row i, and the key columns are not read."""
        first = self._columns(key, with_keys=False)
        if first is None:
            return None
        left, right = first
        if (
            not self.repeated
            and left.unique_keys
            and right.unique_keys
            and left.keys_digest == right.keys_digest
        ):
            return Side.of(left, aligned=True), Side.of(right, aligned=True)
        loaded = self._columns(key, with_keys=True)
        return (Side.of(loaded[0]), Side.of(loaded[1])) if loaded is not None else None

    def _columns(
        self, key: str, *, with_keys: bool
    ) -> tuple[stored.MetricColumns, stored.MetricColumns] | None:
        loaded = [
            stored.load(self._conn, experiment_id, [key], with_keys=with_keys) for experiment_id in self._ids
        ]
        columns = [s.metrics.get(key) if s is not None else None for s in loaded]
        if columns[0] is None or columns[1] is None or columns[0].id_format != columns[1].id_format:
            return None
        return columns[0], columns[1]


def load_pair(conn: Any, a: str, b: str) -> ColumnPair | None:
    """Both experiments' column sets, or None when either has none stored."""
    sets = [stored.load(conn, experiment_id, keys=[]) for experiment_id in (a, b)]
    if sets[0] is None or sets[1] is None:
        return None
    return ColumnPair(conn, a, b, (sets[0], sets[1]))


def paired_sums(key: str, a: Side, b: Side, *, repeated: bool, sign: float) -> PairedSums:
    """``pairing.paired_sums`` for one metric, from columns."""
    if repeated:
        return _example_sums(key, per_example(a), per_example(b))
    return _row_sums(key, a, b, sign)


def differences(a: Side, b: Side) -> list[float]:
    """``pairing.paired_differences``: per example, B's mean minus A's, in example order."""
    if a.aligned:  # one result per example on each side, in the same order
        both = (a.outcomes == SCORED) & (b.outcomes == SCORED)
        aligned: list[float] = (b.scores[both] - a.scores[both]).tolist()
        return aligned
    pa, pb = per_example(a), per_example(b)
    ib = _match_unique(pa.ids, pb.ids)
    found = ib >= 0
    result: list[float] = (pb.means[ib[found]] - pa.means[found]).tolist()
    return result


def per_example(side: Side) -> PerExample:
    scored = side.outcomes == SCORED
    ids, scores = side.ids[scored], side.scores[scored]
    if len(ids) == 0:
        return PerExample(ids, scores, np.zeros(0, dtype=np.int64))
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    counts = np.diff(np.r_[starts, len(ids)])
    means = np.add.reduceat(scores, starts) / counts
    return PerExample(ids[starts], means, counts)


def _row_sums(key: str, a: Side, b: Side, sign: float) -> PairedSums:
    sa, sb, oa, ob = _paired_rows(a, b)
    has_a, has_b = oa == SCORED, ob == SCORED
    errored_a, errored_b = oa == ERRORED, ob == ERRORED
    both = has_a & has_b
    change = sign * (sb - sa)  # NaN where either has no score: no comparison holds
    with np.errstate(invalid="ignore"):
        worse = (errored_b & ~errored_a) | (change < -EPSILON)
        better = (errored_a & ~errored_b & has_b) | (change > EPSILON)
    paired = _Paired(sa[both], sb[both], None, None)
    return paired.sums(
        key,
        scored_a=int(np.count_nonzero(has_a)),
        scored_b=int(np.count_nonzero(b.outcomes == SCORED)),
        repeated=False,
        rows=(int(np.count_nonzero(worse)), int(np.count_nonzero(better))),
    )


def _paired_rows(
    a: Side, b: Side
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any], NDArray[Any]]:
    """Scores and outcomes of both sides, one entry per joined pair of rows (B's NaN and
    absent where A's row has no partner); the columns themselves when row i pairs row i."""
    if a.aligned or (_same_keys(a, b) and _unique(a)):
        return a.scores, b.scores, a.outcomes, b.outcomes
    ia, ib = _row_join(a, b)
    found = ib >= 0
    ib_safe = np.where(found, ib, 0)
    sb = np.where(found, b.scores[ib_safe] if len(b.scores) else np.nan, np.nan)
    ob = np.where(found, b.outcomes[ib_safe] if len(b.outcomes) else _ABSENT, _ABSENT)
    return a.scores[ia], sb, a.outcomes[ia], ob


def _example_sums(key: str, pa: PerExample, pb: PerExample) -> PairedSums:
    ib = _match_unique(pa.ids, pb.ids)
    found = ib >= 0
    kb = pb.counts[ib[found]]
    paired = _Paired(pa.means[found], pb.means[ib[found]], pa.counts[found], kb)
    repeated = bool((len(pa.counts) and pa.counts.max() > 1) or (len(kb) and kb.max() > 1))
    return paired.sums(key, scored_a=len(pa.ids), scored_b=len(pb.ids), repeated=repeated, rows=None)


@dataclass(frozen=True)
class _Paired:
    """The paired scores of one metric (per row or per example), and their counts."""

    sa: NDArray[np.float64]
    sb: NDArray[np.float64]
    ka: NDArray[np.int64] | None
    kb: NDArray[np.int64] | None

    def sums(
        self, key: str, *, scored_a: int, scored_b: int, repeated: bool, rows: tuple[int, int] | None
    ) -> PairedSums:
        sa, sb = self.sa, self.sb
        d = sb - sa
        zero_a, one_a, zero_b, one_b = sa == 0.0, sa == 1.0, sb == 0.0, sb == 1.0
        binary_pairs = (zero_a | one_a) & (zero_b | one_b)
        if self.ka is not None and self.kb is not None:
            binary_pairs &= (self.ka == 1) & (self.kb == 1)
        n = len(sa)
        return PairedSums(
            key=key,
            scored_a=scored_a,
            scored_b=scored_b,
            n=n,
            sum_a=float(sa.sum()),
            sum_b=float(sb.sum()),
            sum_d=float(d.sum()),
            sum_dd=float((d * d).sum()),
            binary=n > 0 and bool(binary_pairs.all()),
            both_pass=int(np.count_nonzero(one_a & one_b)),
            only_a=int(np.count_nonzero(one_a & zero_b)),
            only_b=int(np.count_nonzero(zero_a & one_b)),
            neither=int(np.count_nonzero(zero_a & zero_b)),
            repeated=repeated,
            rows_worse=rows[0] if rows is not None else None,
            rows_better=rows[1] if rows is not None else None,
        )


def _row_join(a: Side, b: Side) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """For sides whose keys differ: indexes (into A, into B) of every pair of rows on one (example, repetition), and
    each A row without a partner once with B index -1 (the SQL's LEFT JOIN)."""
    if len(b.ids) == 0:
        return np.arange(len(a.ids)), np.full(len(a.ids), -1, dtype=np.intp)
    keys_a, keys_b = _row_keys(a, b)
    order = np.argsort(keys_b, kind="stable")
    sorted_b = keys_b[order]
    low = np.searchsorted(sorted_b, keys_a, "left")
    high = np.searchsorted(sorted_b, keys_a, "right")
    matches = high - low
    copies = np.maximum(matches, 1)
    ia = np.repeat(np.arange(len(keys_a)), copies)
    starts = np.cumsum(copies) - copies
    within = np.arange(len(ia)) - np.repeat(starts, copies)
    positions = np.repeat(low, copies) + within
    ib = np.where(np.repeat(matches == 0, copies), -1, order[np.minimum(positions, max(len(order) - 1, 0))])
    return ia, ib


def _match_unique(ids_a: NDArray[Any], ids_b: NDArray[Any]) -> NDArray[np.intp]:
    """For each id of A (unique, sorted), its index in B's (unique), or -1."""
    if len(ids_a) == len(ids_b) and ids_a.tobytes() == ids_b.tobytes():
        return np.arange(len(ids_a))
    if len(ids_b) == 0:
        return np.full(len(ids_a), -1, dtype=np.intp)
    order = np.argsort(ids_b, kind="stable")
    sorted_b = ids_b[order]
    at = np.minimum(np.searchsorted(sorted_b, ids_a), len(sorted_b) - 1)
    return np.where(sorted_b[at] == ids_a, order[at], -1)


def _same_keys(a: Side, b: Side) -> bool:
    return (
        len(a.ids) == len(b.ids)
        and a.ids.tobytes() == b.ids.tobytes()
        and a.repetitions.tobytes() == b.repetitions.tobytes()
    )


def _unique(side: Side) -> bool:
    same = (side.ids[1:] == side.ids[:-1]) & (side.repetitions[1:] == side.repetitions[:-1])
    return not bool(same.any())


def _row_keys(a: Side, b: Side) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """One integer per (example, repetition), comparable across both sides."""
    _, codes = np.unique(np.concatenate([a.ids, b.ids]), return_inverse=True)
    codes = codes.astype(np.int64).reshape(-1)
    span = int(max(a.repetitions.max(initial=0), b.repetitions.max(initial=0))) + 1
    reps = np.concatenate([a.repetitions, b.repetitions]).astype(np.int64)
    keys = codes * span + reps
    return keys[: len(a.ids)], keys[len(a.ids) :]
