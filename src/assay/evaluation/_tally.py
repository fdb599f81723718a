"""What an experiment keeps of its rows while they run: a compact tally, not the rows.

Per row, the runner keeps only its position (the cluster for standard errors: one per
example), whether the target failed, its latency and, per result, the metric key and
score: 16 bytes a score in typed arrays instead of ~7 KB of records. From the tally come
the experiment's stored figures (counts, per-metric mean, interval, range, histogram),
written with the rows while the experiment runs and exactly once it ends.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import orjson

from assay._metric import MetricInfo
from assay.evaluation._stats import MetricAggregate, aggregate, binary_aggregate
from assay.schemas import EvaluationResult
from assay.store.records import ExperimentRow, ExperimentStats, MetricStats

BINS = 10


class ResultTally(NamedTuple):  # tuples: made per result, several times cheaper than a frozen dataclass
    key: str
    score: float | None  # None when errored or not numeric
    errored: bool
    usage: dict[str, Any] | None
    info: dict[str, Any] | None = None  # the evaluator's declared direction and range


class RowTally(NamedTuple):
    position: int
    run_failed: bool
    latency_ms: float | None
    results: tuple[ResultTally, ...]


# A NamedTuple's ``__new__`` is Python code; per row and result, tuple's own (the same tuple).
_made = tuple.__new__


def tally_row(row: ExperimentRow) -> RowTally:
    run = row.run.__dict__  # read once: attribute access on a pydantic model costs more
    end = run["end_time"]  # Run.latency_ms, without the property's call
    latency = None if end is None else (end - run["start_time"]).total_seconds() * 1000.0
    results = tuple(map(_result_tally, row.results))
    return _made(RowTally, (row.position, run["error"] is not None, latency, results))


def _result_tally(result: EvaluationResult) -> ResultTally:
    fields = result.__dict__  # read once: attribute access on a pydantic model costs more
    score, error, metadata = fields["score"], fields["error"], fields["metadata"]
    if error is not None or score is None:
        score = None
    elif type(score) is not float:
        try:
            score = float(score)
        except OverflowError:  # an int no float can hold: the store records it as errored too
            return _made(ResultTally, (fields["key"], None, True, None, None))
    usage = _usage(metadata.get("usage")) if metadata else None
    return _made(
        ResultTally, (fields["key"], score, error is not None, usage, fields["evaluator_info"] or None)
    )


def _usage(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) and value else None


class _Metric:
    __slots__ = (
        "scores",
        "clusters",
        "errors",
        "unscored",
        "skipped",
        "info",
        "non_binary",
        "ones",
        "first_zero",
        "_seen",
        "repeated",
    )

    def __init__(self) -> None:
        self.scores = array("d")
        self.clusters = array("q")
        self.errors = 0
        self.unscored = 0  # neither score nor error, target succeeded (a value only)
        self.skipped = 0  # neither score nor error because the target failed
        self.info: MetricInfo | None = None
        self.non_binary = 0  # scores other than 0 and 1, counted as they come (not rescanned)
        # What a 0/1 metric's figures need, kept as scores come (see ``binary_figures``):
        self.ones = 0
        self.first_zero: float | None = None  # 0.0 or -0.0, as min() would return it
        self._seen = bytearray()  # a bit per position that has a score
        self.repeated = False  # some position has two scores (repetitions, or a key twice)

    def add(self, position: int, result: ResultTally, run_failed: bool) -> None:
        if self.info is None and result.info:
            self.info = MetricInfo.of(result.info)
        if result.errored:
            self.errors += 1
        elif result.score is None:
            if run_failed:
                self.skipped += 1
            else:
                self.unscored += 1
        else:
            score = result.score
            self.scores.append(score)
            self.clusters.append(position)
            if score == 1.0:
                self.ones += 1
            elif score == 0.0:
                if self.first_zero is None:
                    self.first_zero = score
            else:
                self.non_binary += 1
            self._mark(position)

    def _mark(self, position: int) -> None:
        if position < 0:  # not a row's place: no bit for it, so take the general path
            self.repeated = True
            return
        byte, bit = position >> 3, 1 << (position & 7)
        if byte >= len(self._seen):
            self._seen.extend(bytes(max(byte + 1 - len(self._seen), len(self._seen))))
        elif self._seen[byte] & bit:
            self.repeated = True
        self._seen[byte] |= bit

    @property
    def _counted(self) -> bool:
        """A 0/1 metric with one score per position: its figures follow from counts."""
        return bool(self.scores) and not self.non_binary and not self.repeated

    def aggregate(self, key: str) -> MetricAggregate:
        if self._counted:
            return binary_aggregate(
                key,
                len(self.scores),
                self.ones,
                self.first_zero,
                self.errors,
                skipped=self.skipped,
                info=self.info,
            )
        return aggregate(key, self.scores, self.clusters, self.errors, skipped=self.skipped, info=self.info)

    def _range(self) -> tuple[float | None, float | None]:
        if not self.scores:
            return None, None
        if self._counted:  # what min() and max() return, without a pass over the scores
            zero = self.first_zero if self.first_zero is not None else 1.0
            return (zero, 1.0 if self.ones else zero)
        return min(self.scores), max(self.scores)

    def _histogram(self, low: float | None, high: float | None) -> list[int]:
        if self._counted:
            return [len(self.scores) - self.ones] + [0] * (BINS - 2) + [self.ones]
        return _histogram(self.scores, low, high)

    def stats(self, key: str) -> MetricStats:
        agg = self.aggregate(key)
        low, high = self._range()
        return MetricStats(
            key=key,
            mean=agg.mean,
            n=agg.n,
            errors=self.errors,
            unscored=self.unscored,
            stderr=agg.stderr,
            ci_low=agg.ci_low,
            ci_high=agg.ci_high,
            min=low,
            max=high,
            histogram=self._histogram(low, high),
            skipped=self.skipped,
            ci_method=agg.method,
            direction=agg.direction,
            score_range=agg.score_range,
            binary=bool(self.scores) and not self.non_binary,
        )


def _histogram(scores: array[float], low: float | None, high: float | None) -> list[int]:
    """Counts in BINS equal bins: over [0, 1] for a unit-range metric, else [low, high];
    one bin when every score is equal (as the UI draws it)."""
    if low is None or high is None:
        return []
    if low >= 0 and high <= 1:
        low, high = 0.0, 1.0
    elif high == low:
        return [len(scores)]
    counts = [0] * BINS
    scale = BINS / (high - low)
    top = BINS - 1
    for score in scores:
        counts[min(int((score - low) * scale), top)] += 1
    return counts


class Tally:
    """Running totals of an experiment; ``add`` from one thread (the writer)."""

    def __init__(self) -> None:
        self.rows = 0
        self.run_errors = 0
        self.latency_n = 0
        self.latency_sum = 0.0
        self.latency_max: float | None = None
        self.usage: dict[str, float] = {}
        self._metrics: dict[str, _Metric] = {}

    def add(self, row: RowTally) -> None:
        self.rows += 1
        self.run_errors += row.run_failed
        if row.latency_ms is not None:
            self.latency_n += 1
            self.latency_sum += row.latency_ms
            if self.latency_max is None or row.latency_ms > self.latency_max:
                self.latency_max = row.latency_ms
        for result in row.results:
            metric = self._metrics.get(result.key)
            if metric is None:
                metric = self._metrics[result.key] = _Metric()
            metric.add(row.position, result, row.run_failed)
            if result.usage is not None:
                self._add_usage(result.usage)

    def _add_usage(self, usage: dict[str, Any]) -> None:
        for name, value in usage.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.usage[name] = self.usage.get(name, 0) + value

    def counts(self) -> ExperimentStats:
        """The exact counts, cheap at any size (no per-metric figures)."""
        return ExperimentStats(
            rows=self.rows,
            run_errors=self.run_errors,
            latency_n=self.latency_n,
            latency_sum=self.latency_sum,
            latency_max=self.latency_max,
            usage=dict(self.usage),
        )

    def stats(self, *, final: bool = False) -> ExperimentStats:
        """Counts and per-metric figures: a pass over the scores (~0.5 s per 1M)."""
        stats = self.counts()
        stats.metrics = [metric.stats(key) for key, metric in self._metrics.items()]
        stats.final = final
        return stats

    def aggregates(self) -> dict[str, MetricAggregate]:
        return {key: metric.aggregate(key) for key, metric in self._metrics.items()}


def tally_of_stored(scores: Iterable[tuple[Any, ...]]) -> Tally:
    """A tally rebuilt from stored rows (``Store.iter_scores``): for a resume, or for an
    experiment stored before figures were kept."""
    tally = Tally()
    for row in _rows_of(scores):
        tally.add(row)
    return tally


def _rows_of(scores: Iterable[tuple[Any, ...]]) -> Iterator[RowTally]:
    current: tuple[Any, ...] | None = None
    results: list[ResultTally] = []
    for position, run_failed, latency, run_id, key, score, errored, usage, info in scores:
        if current is None or run_id != current[3]:
            if current is not None:
                yield RowTally(current[0], bool(current[1]), current[2], tuple(results))
            current, results = (position, run_failed, latency, run_id), []
        if key is not None:
            value = None if errored or score is None or math.isnan(score) else float(score)
            results.append(ResultTally(key, value, bool(errored), _usage_of(usage), _json_object(info)))
    if current is not None:
        yield RowTally(current[0], bool(current[1]), current[2], tuple(results))


def usage_by_key(scores: Iterable[tuple[Any, ...]]) -> dict[str, dict[str, float]]:
    """Per result key, the numeric usage fields summed and the results counted (as
    ``judgements``), over ``Store.iter_scores``-shaped tuples; keys without usage left out."""
    found: dict[str, dict[str, float]] = {}
    for *_, key, _score, _errored, usage, _info in scores:
        fields = usage if isinstance(usage, dict) else _usage_of(usage)
        if key is None or not fields:
            continue
        into = found.setdefault(key, {"judgements": 0})
        into["judgements"] += 1
        for name, value in fields.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                into[name] = into.get(name, 0) + value
    return found


def _usage_of(text: str | None) -> dict[str, Any] | None:
    return _usage(_json_object(text))


def _json_object(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
