"""The Jinja environment: autoescaping on, plus the helpers templates call."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from starlette.requests import Request

from assay.ui import charts, views
from assay.ui.csrf import csrf_token, writable
from assay.ui.reading.code import highlighted
from assay.ui.text import clean_text
from assay.ui.trend import chart

__all__ = [
    "TEMPLATES",
    "make_templates",
    "node_kind",
    "page_count",
    "short_id",
    "short_time",
    "sort_link",
    "sort_mark",
    "with_query",
]


TEMPLATES = Path(__file__).parent / "templates"


def with_query(request: Request, **changes: Any) -> str:
    """This page's address with some query parameters replaced (None removes one)."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k not in changes]
    for name, value in changes.items():
        if value is None or value is False:
            continue
        values = value if isinstance(value, list) else [value]
        params.extend((name, str(v)) for v in values)
    query = urlencode(params)
    return request.url.path + (f"?{query}" if query else "")


def sort_link(request: Request, current: str, order: str, sort: str) -> str:
    """Sorting by ``sort``: ascending first, flipping when it is already the sort."""
    flipped = "desc" if current == sort and order == "asc" else "asc"
    return with_query(request, sort=sort, order=flipped, page=None, after=None)


def sort_mark(current: str, order: str, sort: str) -> str:
    if current != sort:
        return ""
    return "▲" if order == "asc" else "▼"


def page_count(total: int, per_page: int) -> int:
    return max((total + per_page - 1) // per_page, 1)


def short_id(value: str | None) -> str:
    return (value or "")[:8]


def short_time(value: str | None) -> str:
    """ISO time without seconds' fractions (the page's script shows it in local time)."""
    if not value:
        return "—"
    return value.replace("T", " ")[:19]


def node_kind(node: views.Node) -> str:
    return type(node).__name__.lower()


def _printable(value: Any) -> Any:
    """Every printed string, without lone surrogates (a page must encode as UTF-8). Markup
    (a macro's output) stays markup: a plain ``str`` back would be escaped whole."""
    if isinstance(value, Markup):
        return Markup(clean_text(str(value)))
    return clean_text(value) if isinstance(value, str) else value


def make_templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(TEMPLATES))
    env = templates.env
    env.autoescape = True
    env.finalize = _printable
    env.trim_blocks = True
    env.lstrip_blocks = True
    env.globals.update(
        view=views.view,
        with_query=with_query,
        sort_link=sort_link,
        sort_mark=sort_mark,
        page_count=page_count,
        score_class=views.score_class,
        num=views.format_number,
        pvalue=views.format_p_value,
        without_traceback=views.without_traceback,
        traceback_of=views.traceback_of,
        shown_metadata=views.shown_metadata,
        judge_call_of=views.judge_call_of,
        highlighted=highlighted,
        histogram_bars=charts.histogram_bars,
        histogram_ticks=charts.histogram_ticks,
        timeline_span=charts.timeline_span,
        timeline_total=charts.timeline_total,
        short_id=short_id,
        short_time=short_time,
        node_kind=node_kind,
        csrf_token=csrf_token,
        writable=writable,
        trend_marks=chart.marks,
        trend_size=(chart.WIDTH, chart.HEIGHT),
    )
    for name in env.list_templates(filter_func=lambda name: name.endswith(".html")):
        env.get_template(name)  # compile now, so the first visit to a page does not pay for it
    return templates
