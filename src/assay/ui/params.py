"""Query parameters shared by the pages and the JSON API, validated with named errors.

HTML forms send empty fields, so optional values arrive as strings and an empty string
means "not set".
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from fastapi import Depends, Query, Request

from assay.store.read.walk import Cursor, decode_cursor
from assay.ui.errors import BadRequest
from assay.ui.models import RowFilter

__all__ = [
    "MAX_PER_PAGE",
    "Paging",
    "PagingParams",
    "RowCursorParam",
    "RowFilterParams",
    "THRESHOLD_PREFIX",
    "VersionParam",
    "blank_is_none",
    "dataset_version",
    "parse_number",
    "row_filter",
]


MAX_PER_PAGE = 500
# Page and version numbers past these answer 400: an offset must fit SQLite's 64-bit integers.
MAX_PAGE = 1_000_000_000
MAX_VERSION = 2**31 - 1


class Paging:
    def __init__(
        self,
        page: Annotated[int, Query(ge=1, le=MAX_PAGE, description="1-based page number")] = 1,
        per_page: Annotated[int, Query(ge=1, le=MAX_PER_PAGE, description="rows per page")] = 50,
    ) -> None:
        self.page = page
        self.per_page = per_page


PagingParams = Annotated[Paging, Depends()]


def blank_is_none(value: str | None) -> str | None:
    return value if value is not None and value.strip() else None


def parse_number(name: str, value: str | None) -> float | None:
    text = blank_is_none(value)
    if text is None:
        return None
    try:
        number = float(text)
    except ValueError:
        raise BadRequest(f"parameter {name!r} must be a number, got {text!r}") from None
    if not math.isfinite(number):
        raise BadRequest(f"parameter {name!r} must be a finite number, got {text!r}")
    return number


THRESHOLD_PREFIX = "fail."
MAX_THRESHOLDS = 100


def thresholds(request: Request) -> dict[str, float | None]:
    """The per-metric failing thresholds in the URL: ``fail.<key>=<number>``, or empty for
    "no threshold" (which turns a 0/1 metric's default off)."""
    found: dict[str, float | None] = {}
    for name, value in request.query_params.multi_items():
        if name.startswith(THRESHOLD_PREFIX):
            key = name.removeprefix(THRESHOLD_PREFIX)
            if not key:
                raise BadRequest(f"parameter {name!r} needs a metric key after {THRESHOLD_PREFIX!r}")
            found[key] = parse_number(name, value)
    if len(found) > MAX_THRESHOLDS:
        raise BadRequest(f"at most {MAX_THRESHOLDS} fail.<key> thresholds, got {len(found)}")
    return found


def row_filter(
    request: Request,
    failed: Annotated[
        bool,
        Query(
            description="only failing rows: target error, evaluator error, a 0/1 metric at "
            "its worst value, or 'metric' worse than 'worse_than'"
        ),
    ] = False,
    metric: Annotated[str | None, Query(description="a metric key, for 'below'")] = None,
    below: Annotated[str | None, Query(description="a number: rows whose 'metric' scores below it")] = None,
    worse_than: Annotated[
        str | None, Query(description="a number: the failing threshold of 'metric', read with its direction")
    ] = None,
    q: Annotated[str | None, Query(description="text searched in inputs and outputs")] = None,
    sort: Annotated[str, Query(description="position, latency, error or metric:<key>")] = "position",
    order: Annotated[Literal["asc", "desc"], Query()] = "asc",
) -> RowFilter:
    return RowFilter(
        failed=failed,
        metric=blank_is_none(metric),
        below=parse_number("below", below),
        worse_than=parse_number("worse_than", worse_than),
        thresholds=thresholds(request),
        q=blank_is_none(q),
        sort=blank_is_none(sort) or "position",
        order=order,
    )


RowFilterParams = Annotated[RowFilter, Depends(row_filter)]


def row_cursor(
    after: Annotated[
        str | None,
        Query(description="the previous page's 'next_after': the next page starts after that row"),
    ] = None,
) -> Cursor | None:
    text = blank_is_none(after)
    try:
        return None if text is None else decode_cursor(text)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


RowCursorParam = Annotated[Cursor | None, Depends(row_cursor)]


def dataset_version(
    version: Annotated[str | None, Query(description="a dataset version (default: current)")] = None,
) -> int | None:
    number = parse_number("version", version)
    if number is None:
        return None
    if not number.is_integer() or not 0 <= number <= MAX_VERSION:
        raise BadRequest(f"parameter 'version' must be a whole number in [0, {MAX_VERSION}], got {version!r}")
    return int(number)


VersionParam = Annotated[int | None, Depends(dataset_version)]
