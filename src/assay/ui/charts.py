"""Geometry for the server-rendered SVG charts: histograms and trace timelines."""

from __future__ import annotations

from dataclasses import dataclass

from assay.ui.models import Histogram, RunNode
from assay.ui.views import format_number

__all__ = [
    "Bar",
    "Span",
    "Tick",
    "histogram_bars",
    "histogram_ticks",
    "timeline_span",
    "timeline_total",
]


WIDTH, HEIGHT, LABEL_SPACE = 300.0, 90.0, 16.0


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    count: int
    label: str
    error: bool = False


def histogram_bars(histogram: Histogram) -> list[Bar]:
    """One bar per bin, then a separate bar for errored results (never a zero)."""
    slots = len(histogram.bins) + (1 if histogram.errors else 0)
    if slots == 0:
        return []
    counts = [b.count for b in histogram.bins] + ([histogram.errors] if histogram.errors else [])
    tallest = max(max(counts), 1)
    slot = WIDTH / slots
    bars = []
    for index, count in enumerate(counts):
        is_error = index == len(histogram.bins)
        label = "error" if is_error else _bin_label(histogram, index)
        height = (HEIGHT - LABEL_SPACE) * count / tallest
        bars.append(
            Bar(
                index * slot + 1,
                HEIGHT - LABEL_SPACE - height,
                max(slot - 2, 1),
                height,
                count,
                label,
                error=is_error,
            )
        )
    return bars


@dataclass(frozen=True)
class Tick:
    x: float
    label: str
    anchor: str  # start | middle | end


def histogram_ticks(histogram: Histogram) -> list[Tick]:
    """The axis's low and high ends, and "error" under the error bar when there is one."""
    if not histogram.bins:
        return []
    slots = len(histogram.bins) + (1 if histogram.errors else 0)
    slot = WIDTH / slots
    end = slot * len(histogram.bins)
    ticks = [Tick(1.0, format_number(histogram.bins[0].low, 2), "start")]
    if len(histogram.bins) > 1:
        ticks.append(Tick(end - 1, format_number(histogram.bins[-1].high, 2), "end"))
    if histogram.errors:
        ticks.append(Tick(end + slot / 2, "error", "middle"))
    return ticks


def _bin_label(histogram: Histogram, index: int) -> str:
    b = histogram.bins[index]
    if b.low == b.high:
        return format_number(b.low)
    closing = "]" if index == len(histogram.bins) - 1 else ")"
    return f"[{format_number(b.low, 2)}, {format_number(b.high, 2)}{closing}"


@dataclass(frozen=True)
class Span:
    x: float
    width: float


def timeline_span(node: RunNode, total_ms: float | None) -> Span | None:
    """Where a step sits on a 0..1000 axis spanning the root run."""
    if not total_ms or node.offset_ms is None or node.duration_ms is None:
        return None
    x = min(max(node.offset_ms / total_ms, 0.0), 1.0) * 1000
    width = max(min(node.duration_ms / total_ms, 1.0) * 1000, 2.0)
    return Span(x, min(width, 1000 - x) or 2.0)


def timeline_total(root: RunNode) -> float | None:
    """The root's duration, or the last child end when the root has none."""
    ends = [root.duration_ms or 0.0]
    stack = list(root.children)
    while stack:
        node = stack.pop()
        if node.offset_ms is not None and node.duration_ms is not None:
            ends.append(node.offset_ms + node.duration_ms)
        stack.extend(node.children)
    total = max(ends)
    return total if total > 0 else None
