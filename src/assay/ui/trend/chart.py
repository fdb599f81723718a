"""A trend's points placed on an SVG: x by order, y by score, whiskers for the interval."""

from __future__ import annotations

from dataclasses import dataclass

from assay.ui.trend.series import Series

__all__ = ["WIDTH", "HEIGHT", "Mark", "marks"]

WIDTH, HEIGHT, PAD = 640, 160, 24


@dataclass(frozen=True)
class Mark:
    x: float
    y: float | None
    low: float | None
    high: float | None
    label: str
    change: str | None
    improving: bool | None


def marks(series: Series) -> list[Mark]:
    values = [v for p in series.points for v in (p.mean, p.ci_low, p.ci_high) if v is not None]
    if not values:
        return []
    bottom, top = min(min(values), 0.0), max(max(values), 1.0 if max(values) <= 1 else max(values))
    span = (top - bottom) or 1.0
    step = (WIDTH - 2 * PAD) / max(len(series.points) - 1, 1)

    def y(value: float | None) -> float | None:
        return (
            None if value is None else round(HEIGHT - PAD - (value - bottom) / span * (HEIGHT - 2 * PAD), 1)
        )

    found = []
    for index, point in enumerate(series.points):
        better = point.change == "better"
        found.append(
            Mark(
                x=round(PAD + index * step, 1),
                y=y(point.mean),
                low=y(point.ci_low),
                high=y(point.ci_high),
                label=f"{point.name}: {point.mean if point.mean is None else round(point.mean, 3)}",
                change=point.change if point.change in ("better", "worse") else None,
                improving=better if point.change in ("better", "worse") else None,
            )
        )
    return found
