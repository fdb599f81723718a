"""Agreement between raters on the same rows: accuracy, Cohen's kappa, Spearman's rho.

Rows are first folded into *patterns* (one per distinct tuple of labels, with its count):
a bootstrap replicate draws n rows with replacement, which for patterns is one
multinomial draw of their counts, so a replicate costs the number of patterns, not rows
(a 1-5 judge against a 1-5 label has at most 25 patterns at any n). With many distinct
values (continuous scores) a replicate draws row indices instead. Every statistic reads
replicates as weights over patterns, so the estimate (the weights are the counts) and its
95% percentile-bootstrap interval come from one code path, and statistics evaluated
together share their draws: a statistic defined as the difference of two others gets the
paired interval of that difference.

Kappa follows Cohen (1960, 1968): ``1 - sum(D * observed) / sum(D * expected)`` with the
disagreement weights ``D`` 0/1 (nominal), ``|a - b|`` (linear) or ``(a - b)^2``
(quadratic) over the category values, which is scikit-learn's ``cohen_kappa_score`` given
the full label list. Spearman's rho is the Pearson correlation of mid-ranks (scipy's
``spearmanr``); a row drawn twice counts as two tied rows. Needs numpy
(``pip install 'assay[stats]'``).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from assay.errors import require_extra
from assay.stats.intervals import CONFIDENCE, Interval

__all__ = [
    "MAX_CATEGORIES",
    "PERCENTILE",
    "Estimate",
    "LabelledRows",
    "Pair",
    "Weights",
    "accuracy",
    "cohen_kappa",
    "estimates",
    "spearman",
]

PERCENTILE = "percentile bootstrap"
RESAMPLES = 2000
_CHUNK_CELLS = 2_000_000  # replicate x pattern cells per batch: bounded memory at any size
MAX_CATEGORIES = 64  # labels of a kappa or a confusion matrix
_MULTINOMIAL_PATTERNS = 512  # up to this many patterns a replicate is one multinomial draw

Weights = Literal["none", "linear", "quadratic"]
Statistic = Callable[[Any], Any]  # replicates x patterns weights -> one figure per replicate


@dataclass(frozen=True)
class Estimate:
    """A figure, its bootstrap interval (None when undefined) and the rows it rests on."""

    value: float | None
    interval: Interval | None
    n: int


class LabelledRows:
    """Named label columns over the same rows, folded into patterns.

    ``columns`` maps a rater's name to its labels, one per row, all of one length. Labels
    of one column are numbers or text; the two columns of a ``pair`` share categories.
    """

    def __init__(self, columns: Mapping[str, Sequence[Any]]) -> None:
        np = _numpy()
        lengths = {name: len(labels) for name, labels in columns.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"every rater must label the same rows, got {lengths}")
        self.n = next(iter(lengths.values()), 0)
        self.names = list(columns)
        self.categories = {name: sorted(set(labels)) for name, labels in columns.items()}
        codes = np.empty((self.n, len(self.names)), dtype=np.int64)
        for position, (name, labels) in enumerate(columns.items()):
            index = {label: code for code, label in enumerate(self.categories[name])}
            codes[:, position] = [index[label] for label in labels]
        patterns, counts = np.unique(codes, axis=0, return_counts=True) if self.n else (codes, [])
        self.patterns = patterns  # patterns x columns: each column's category code
        self.counts = np.asarray(counts, dtype=float)

    def pair(self, first: str, second: str) -> Pair:
        return Pair(self, first, second)


class Pair:
    """Two raters of ``LabelledRows``, their categories merged (for tables and distances)."""

    def __init__(self, rows: LabelledRows, first: str, second: str) -> None:
        np = _numpy()
        self.rows = rows
        self.categories = sorted(set(rows.categories[first]) | set(rows.categories[second]))
        merged = {label: code for code, label in enumerate(self.categories)}

        def recode(name: str) -> Any:
            table = np.asarray([merged[label] for label in rows.categories[name]], dtype=np.int64)
            return table[rows.patterns[:, rows.names.index(name)]]

        self.first, self.second = recode(first), recode(second)
        self._one_hot: Any = None

    @property
    def numeric(self) -> bool:
        return all(isinstance(v, numbers.Real) for v in self.categories)

    def values(self) -> Any:
        return _numpy().asarray(self.categories, dtype=float)

    def table(self, weights: Any) -> Any:
        """Per replicate the joint table ``[r, i, j]``: rows labelled i by the first rater
        and j by the second."""
        np = _numpy()
        k = len(self.categories)
        if self._one_hot is None:
            if k > MAX_CATEGORIES:
                raise ValueError(
                    f"{k} distinct labels are too many for a table (at most {MAX_CATEGORIES}): "
                    "treat the scores as continuous"
                )
            self._one_hot = np.zeros((len(self.first), k * k))
            self._one_hot[np.arange(len(self.first)), self.first * k + self.second] = 1.0
        return (weights @ self._one_hot).reshape(-1, k, k)


def accuracy(pair: Pair) -> Statistic:
    """The share of rows where both raters gave the same label."""
    same = (pair.first == pair.second).astype(float)
    return lambda weights: (weights @ same) / weights.sum(axis=1)


def cohen_kappa(pair: Pair, weights: Weights = "none") -> Statistic:
    """Cohen's kappa, weighted by the distance between category values when asked."""
    np = _numpy()
    k = len(pair.categories)
    if weights == "none":
        disagreement = 1.0 - np.eye(k)
    else:
        if not pair.numeric:
            raise ValueError(f"{weights} weighted kappa needs numeric labels, got {pair.categories[:5]}")
        values = pair.values()
        gap = np.abs(values[:, None] - values[None, :])
        disagreement = gap if weights == "linear" else gap**2
    flat = disagreement.reshape(-1)

    def kappa(w: Any) -> Any:
        table = pair.table(w)
        total = table.sum(axis=(1, 2))
        expected = np.einsum("ri,rj->rij", table.sum(axis=2), table.sum(axis=1)) / total[:, None, None]
        observed_d = table.reshape(-1, k * k) @ flat
        expected_d = expected.reshape(-1, k * k) @ flat
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(expected_d > 0, 1.0 - observed_d / expected_d, np.nan)

    return kappa


def spearman(pair: Pair) -> Statistic:
    """Spearman's rho: Pearson's correlation of the two raters' mid-ranks."""
    np = _numpy()
    if not pair.numeric:
        raise ValueError("Spearman's rho needs numeric labels")
    values = pair.values()
    x, y = values[pair.first], values[pair.second]

    def rho(w: Any) -> Any:
        rx, ry = _midranks(np, w, x), _midranks(np, w, y)
        total = w.sum(axis=1, keepdims=True)
        dx = rx - (w * rx).sum(axis=1, keepdims=True) / total
        dy = ry - (w * ry).sum(axis=1, keepdims=True) / total
        cov = (w * dx * dy).sum(axis=1)
        spread = np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(spread > 0, cov / spread, np.nan)

    return rho


def estimates(
    rows: LabelledRows,
    statistics: Mapping[str, Statistic],
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> dict[str, Estimate]:
    """Each statistic on every row, with its percentile-bootstrap interval (same draws)."""
    np = _numpy()
    if rows.n == 0:
        return {name: Estimate(None, None, 0) for name in statistics}
    observed = rows.counts[None, :]
    values = {name: float(statistic(observed)[0]) for name, statistic in statistics.items()}
    draws: dict[str, list[Any]] = {name: [] for name in statistics}
    if rows.n >= 2:
        for weights in bootstrap_weights(rows, resamples, seed):
            for name, statistic in statistics.items():
                draws[name].append(statistic(weights))
    found = {}
    for name, value in values.items():
        interval = _percentile(np, np.concatenate(draws[name]), confidence) if draws[name] else None
        found[name] = Estimate(None, None, rows.n) if np.isnan(value) else Estimate(value, interval, rows.n)
    return found


def bootstrap_weights(rows: LabelledRows, resamples: int = RESAMPLES, seed: int = 0) -> Iterator[Any]:
    """Batches of replicates: how many of the n rows drawn with replacement fell on each pattern."""
    np = _numpy()
    if resamples < 100:
        raise ValueError(f"resamples must be at least 100, got {resamples}")
    rng = np.random.default_rng(seed)
    patterns = len(rows.counts)
    if patterns <= _MULTINOMIAL_PATTERNS:
        yield rng.multinomial(rows.n, rows.counts / rows.n, size=resamples).astype(float)
        return
    row_pattern = np.repeat(np.arange(patterns), rows.counts.astype(np.int64))
    per_batch = max(1, _CHUNK_CELLS // rows.n)
    for start in range(0, resamples, per_batch):
        lines = min(per_batch, resamples - start)
        drawn = row_pattern[rng.integers(0, rows.n, size=(lines, rows.n))]
        drawn += (np.arange(lines) * patterns)[:, None]
        counts = np.bincount(drawn.reshape(-1), minlength=lines * patterns)
        yield counts.reshape(lines, patterns).astype(float)


def _midranks(np: Any, w: Any, x: Any) -> Any:
    """Each pattern's mid-rank among the weighted rows (weight 2: two tied rows)."""
    distinct, group = np.unique(x, return_inverse=True)
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(len(distinct)))
    per_value = np.add.reduceat(w[:, order], starts, axis=1)  # replicates x distinct values
    below = np.cumsum(per_value, axis=1) - per_value
    return (below + (per_value + 1) / 2)[:, group]


def _percentile(np: Any, replicates: Any, confidence: float) -> Interval | None:
    finite = replicates[np.isfinite(replicates)]
    if len(finite) == 0:
        return None
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return Interval(float(low), float(high), PERCENTILE)


def _numpy() -> Any:
    return require_extra("numpy", "stats", feature="agreement statistics")
