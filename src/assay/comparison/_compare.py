"""``compare(a, b)``: the paired comparison of two stored experiments."""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import replace
from typing import Any, Literal

from assay._metric import UNIT_RANGE, MetricInfo, Range
from assay.comparison._model import Comparison, MetricComparison, SideSummary, Verdict
from assay.comparison._sources import ensure_columns, source_for
from assay.comparison.comparability import check_comparable, experiment_record
from assay.comparison.verbosity import VerbosityCheck, verbosity_check
from assay.errors import NotComparableError
from assay.stats.bootstrap import bca_interval
from assay.stats.intervals import Interval
from assay.stats.paired import ALPHA, BinaryPairs, Differences, PairedTest, holm, mcnemar, paired_t
from assay.stats.wilcoxon import WILCOXON, signed_rank_p
from assay.store.base import Store
from assay.store.read import pairing as query
from assay.store.records import ExperimentRecord

ContinuousTest = Literal["t", "wilcoxon"]
IntervalMethod = Literal["t", "bca"]
ExperimentRef = str | uuid.UUID | ExperimentRecord | Any  # name, id, record or ExperimentResults


def compare(
    a: ExperimentRef,
    b: ExperimentRef,
    *,
    client: Any = None,
    cluster_by: str | None = None,
    metrics: list[str] | None = None,
    test: ContinuousTest = "t",
    interval: IntervalMethod = "t",
) -> Comparison:
    """Compare experiment ``b`` against the baseline ``a``, paired by example.

    ``a`` and ``b`` are experiment names, ids, ``ExperimentRecord``s or
    ``ExperimentResults``. The store is ``client``'s (an ``assay.Client`` or a ``Store``),
    else the one the results came from, else the default store.

    Per metric present on both sides, repetitions are averaged per example, examples
    scored on both sides are paired, and the difference B - A is tested: exact McNemar
    for 0/1 scores, paired t otherwise (cluster-robust on the metadata key
    ``cluster_by`` when given, e.g. several questions from one document). P-values are
    Holm-corrected across the compared metrics, and each metric gets a verdict, read
    with its direction: ``better``, ``worse`` or ``no detectable difference``.

    For continuous metrics ``test="wilcoxon"`` takes the p-value from the Wilcoxon
    signed-rank test instead of paired t, and ``interval="bca"`` gives the difference a
    BCa bootstrap interval (resampling clusters when ``cluster_by`` is given). Both read
    every paired difference, so they cost more than the default, which works from sums.
    0/1 metrics keep exact McNemar and Newcombe.

    Two finished experiments are paired from their stored metric columns (built here on
    first use when a store predates them); a running one, or ``cluster_by``, by SQL.

    Raises ``NotComparableError`` (a ``ValueError``) when the experiments did not run on
    one dataset or share no metric; metrics on one side only, other dataset versions and
    a still running experiment are compared on what overlaps and named in ``warnings``.
    """
    store, opened = _store_for(client, a, b)
    try:
        records = [experiment_record(store, ref) for ref in (a, b)]
        if cluster_by is None:
            for record in records:
                ensure_columns(store, record)
        with query.reading(store) as conn:
            return compare_experiments(
                conn,
                records[0],
                records[1],
                cluster_by=cluster_by,
                metrics=metrics,
                test=test,
                interval=interval,
            )
    finally:
        if opened:
            store.close()


def compare_experiments(
    conn: sqlite3.Connection,
    a: Any,
    b: Any,
    *,
    cluster_by: str | None = None,
    metrics: list[str] | None = None,
    test: ContinuousTest = "t",
    interval: IntervalMethod = "t",
) -> Comparison:
    """``compare`` on an open connection, for experiments given as anything with ``id``,
    ``name``, ``status``, ``dataset_id`` and ``dataset_version`` (a stored record, the
    UI's summary). Used by ``compare`` and by the UI's compare page."""
    records = [a, b]
    _check_options(test, interval, cluster_by)
    check_comparable(records)
    first, second = (str(r.id) for r in records)
    facts = [query.side_facts(conn, first), query.side_facts(conn, second)]
    keys_a, keys_b = list(facts[0].outcomes), list(facts[1].outcomes)
    shared = [k for k in keys_a if k in facts[1].outcomes]
    if metrics is not None:
        unknown = [k for k in metrics if k not in shared]
        if unknown:
            raise KeyError(f"metrics {unknown} are not scored in both experiments; shared: {shared}")
        shared = [k for k in shared if k in metrics]
    warnings = _warnings(records, facts, keys_a, keys_b)
    if not shared:
        raise NotComparableError(
            f"experiments {a.name!r} and {b.name!r} share no metric: "
            f"{a.name!r} has {keys_a or 'none'}, {b.name!r} has {keys_b or 'none'}"
        )
    signs = {key: -1.0 if _info(key, facts).direction == "lower" else 1.0 for key in shared}
    source = source_for(conn, records, cluster_by)
    sums = source.sums(shared, signs)
    clusters = query.cluster_sums(conn, first, second, str(a.dataset_id), cluster_by) if cluster_by else None
    tests = []
    for key in shared:
        cluster = clusters.get(key) if clusters is not None else None
        tested = _tested(sums.get(key), cluster)
        if tested is not None and not tested.test.startswith("exact") and (test, interval) != ("t", "t"):
            tested = _with_options(tested, source.differences(key), cluster, test, interval)
        tests.append(tested)
    adjusted = holm([t.p_value if t is not None else 1.0 for t in tests])
    compared = [
        _metric(key, test, sums.get(key), p_holm, facts) for key, test, p_holm in zip(shared, tests, adjusted)
    ]
    unpaired = [m.key for m in compared if m.only_a or m.only_b]
    if unpaired:
        warnings.append(f"some examples are scored on one side only (not paired) for: {', '.join(unpaired)}")
    checks = _verbosity_checks(conn, first, second, compared, signs)
    warnings.extend(check.sentence(a.name, b.name) for check in checks if check.flagged)
    return Comparison(
        a=_side(a, facts[0]),
        b=_side(b, facts[1]),
        metrics=compared,
        metrics_only_a=[k for k in keys_a if k not in facts[1].outcomes],
        metrics_only_b=[k for k in keys_b if k not in facts[0].outcomes],
        warnings=warnings,
        cluster_by=cluster_by,
        verbosity=checks,
    )


def _verbosity_checks(
    conn: sqlite3.Connection, a: str, b: str, compared: list[MetricComparison], signs: dict[str, float]
) -> list[VerbosityCheck]:
    """The length check of each metric found different (judge metrics only: see
    ``verbosity_check``)."""
    checks = []
    for metric in compared:
        if metric.verdict in ("better", "worse"):
            check = verbosity_check(conn, a, b, metric.key, signs[metric.key], metric.verdict == "better")
            if check is not None:
                checks.append(check)
    return checks


def _tested(sums: query.PairedSums | None, clusters: list[tuple[int, float]] | None) -> PairedTest | None:
    """The test that fits: exact McNemar for one 0/1 score per example and no clustering,
    else paired t (cluster-robust when clustered)."""
    if sums is None or sums.n < 2:
        return None
    if clusters is None and sums.binary:
        return mcnemar(BinaryPairs(sums.both_pass, sums.only_a, sums.only_b, sums.neither))
    return paired_t(Differences(sums.n, sums.sum_d, sums.sum_dd, clusters))


def _check_options(test: str, interval: str, cluster_by: str | None) -> None:
    if test not in ("t", "wilcoxon"):
        raise ValueError(f"test must be 't' or 'wilcoxon', got {test!r}")
    if interval not in ("t", "bca"):
        raise ValueError(f"interval must be 't' or 'bca', got {interval!r}")
    if test == "wilcoxon" and cluster_by is not None:
        raise ValueError(
            "test='wilcoxon' treats examples as independent; with cluster_by use the clustered "
            "paired t (test='t'), optionally with interval='bca'"
        )


def _with_options(
    tested: PairedTest,
    differences: list[float],
    clusters: list[tuple[int, float]] | None,
    test: ContinuousTest,
    interval: IntervalMethod,
) -> PairedTest:
    """The paired t result with the Wilcoxon p-value and/or a BCa interval in its place.
    The MDE stays the t test's (Wilcoxon's efficiency is at least 0.86 of it)."""
    if test == "wilcoxon":
        tested = replace(tested, p_value=signed_rank_p(differences), test=WILCOXON)
    if interval == "bca" and len(differences) >= 2:
        if clusters is not None and len(clusters) >= 2:
            bounds = bca_interval([s for _, s in clusters], [k for k, _ in clusters])
        else:
            bounds = bca_interval(differences)
        tested = replace(tested, interval=bounds)
    return tested


def _metric(
    key: str,
    test: PairedTest | None,
    sums: query.PairedSums | None,
    p_holm: float,
    facts: list[query.SideFacts],
) -> MetricComparison:
    info = _info(key, facts)
    n = sums.n if sums is not None else 0
    binary = sums is not None and sums.binary
    bounds = info.score_range or (UNIT_RANGE if binary else None)
    mean_a = sums.sum_a / n if sums is not None and n else None
    mean_b = sums.sum_b / n if sums is not None and n else None
    interval = _clip_difference(test.interval, bounds) if test is not None else None
    out_a, out_b = facts[0].outcomes[key], facts[1].outcomes[key]
    return MetricComparison(
        key=key,
        direction=info.direction,
        score_range=bounds,
        kind="binary" if binary else "continuous",
        n_paired=n,
        only_a=(sums.scored_a - n) if sums is not None else 0,
        only_b=(sums.scored_b - n) if sums is not None else 0,
        mean_a=mean_a,
        mean_b=mean_b,
        difference=test.difference if test is not None else None,
        interval=interval,
        p_value=test.p_value if test is not None else None,
        p_holm=p_holm if test is not None else None,
        test=test.test if test is not None else None,
        mde=test.mde if test is not None else None,
        verdict=_verdict(test, p_holm, info),
        errors_a=out_a.errors,
        errors_b=out_b.errors,
        skipped_a=out_a.skipped,
        skipped_b=out_b.skipped,
        rows_worse=sums.rows_worse if sums is not None else None,
        rows_better=sums.rows_better if sums is not None else None,
    )


def _verdict(test: PairedTest | None, p_holm: float, info: MetricInfo) -> Verdict:
    if test is None:
        return "not enough pairs"
    if p_holm >= ALPHA or test.difference == 0:
        return "no detectable difference"
    return "better" if info.is_improvement(test.difference) else "worse"


def _clip_difference(interval: Interval | None, bounds: Range | None) -> Interval | None:
    """A difference of scores in [low, high] lies in [low - high, high - low]."""
    if interval is None or bounds is None or bounds[0] is None or bounds[1] is None:
        return interval
    width = bounds[1] - bounds[0]
    return interval.clipped((-width, width))


def _info(key: str, facts: list[query.SideFacts]) -> MetricInfo:
    for side in facts:
        info = MetricInfo.of(side.metric_info.get(key))
        if info.declared:
            return info
    return MetricInfo()


def _warnings(
    records: list[Any], facts: list[query.SideFacts], keys_a: list[str], keys_b: list[str]
) -> list[str]:
    a, b = records
    warnings = []
    if a.dataset_version != b.dataset_version:
        warnings.append(
            f"{a.name!r} ran on dataset version {a.dataset_version}, {b.name!r} on version "
            f"{b.dataset_version}: compared on the examples both scored"
        )
    for record, side in zip(records, facts):
        if record.status == "running":
            warnings.append(f"{record.name!r} is still running: compared on its {side.rows} finished rows")
    only_a = [k for k in keys_a if k not in keys_b]
    only_b = [k for k in keys_b if k not in keys_a]
    if only_a:
        warnings.append(f"metrics only in {a.name!r} (not compared): {', '.join(only_a)}")
    if only_b:
        warnings.append(f"metrics only in {b.name!r} (not compared): {', '.join(only_b)}")
    for key in keys_a:
        if key in keys_b:
            left, right = (MetricInfo.of(side.metric_info.get(key)) for side in facts)
            if left.declared and right.declared and left.direction != right.direction:
                warnings.append(
                    f"metric {key!r} is {left.direction}-is-better in {a.name!r} but "
                    f"{right.direction}-is-better in {b.name!r}; read as in {a.name!r}"
                )
    return warnings


def _side(record: Any, facts: query.SideFacts) -> SideSummary:
    return SideSummary(
        id=str(record.id),
        name=record.name,
        status=record.status,
        rows=facts.rows,
        target_failures=facts.target_failures,
        dataset_version=record.dataset_version,
    )


def _store_for(client: Any, *refs: Any) -> tuple[Store, bool]:
    """The store to read, and whether it was opened here (and so is closed here)."""
    if isinstance(client, Store):
        return client, False
    if client is not None:
        store = getattr(client, "store", None)
        if not isinstance(store, Store):
            raise TypeError(f"client must be an assay.Client or a Store, got {type(client).__name__}")
        return store, False
    for ref in refs:
        store = getattr(ref, "_store", None)
        if isinstance(store, Store):
            return store, False
    for ref in refs:
        url = getattr(ref, "store_url", None)
        if isinstance(url, str) and url != "sqlite://":
            from assay.store.open import open_store

            return open_store(url), True
    from assay.store.current import current_store

    return current_store(), False
