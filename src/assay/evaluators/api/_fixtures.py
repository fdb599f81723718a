"""Fixture answers chosen by method, path, query and request headers.

``inputs["api_fixtures"]`` maps ``"METHOD /path"`` (concrete or the operation's template),
optionally with a query (``"GET /items?cursor=2"``), to ``{"status", "body"}`` and
optionally ``"request_headers": {name: value}`` the request must carry. A paginated
endpoint can so answer each cursor; the most specific fixture that matches wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from assay.errors import EvaluatorInputError


@dataclass(frozen=True)
class Fixture:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    status: int
    body: Any

    def matches(self, call: dict[str, Any], template: str) -> bool:
        if self.method != call["method"] or self.path not in (call["path"], template):
            return False
        return query_matches(self.query, call) and headers_match(self.headers, call)

    @property
    def specificity(self) -> tuple[int, int, int]:
        return (len(self.query), len(self.headers), int("{" not in self.path))


def query_matches(wanted: dict[str, str], call: dict[str, Any]) -> bool:
    query = call.get("query") or {}
    return all(str(query.get(name)) == value for name, value in wanted.items())


def headers_match(wanted: dict[str, str], call: dict[str, Any]) -> bool:
    headers = call.get("headers") or {}
    return all(headers.get(name) == value for name, value in wanted.items())


def parse_fixtures(raw: Any, where: str) -> list[Fixture]:
    if not isinstance(raw, dict):
        raise EvaluatorInputError(f"{where} must map 'METHOD /path[?query]' to {{'status', 'body'}}")
    made = []
    for key, value in raw.items():
        here = f"{where}[{key!r}]"
        method, _, target = str(key).strip().partition(" ")
        path, _, query = target.strip().partition("?")
        if not method or not path.startswith("/") or not isinstance(value, dict):
            raise EvaluatorInputError(f"{here}: give 'METHOD /path[?query]': {{'status', 'body'}}")
        headers = value.get("request_headers") or {}
        if not isinstance(headers, dict):
            raise EvaluatorInputError(f"{here}['request_headers'] must map header names to values")
        made.append(
            Fixture(
                method.upper(),
                path,
                {name: values[-1] for name, values in parse_qs(query).items()},
                {str(k).lower(): str(v) for k, v in headers.items()},
                int(value.get("status", 200)),
                value.get("body"),
            )
        )
    return made


def best_fixture(fixtures: list[Fixture], call: dict[str, Any], template: str) -> Fixture | None:
    found = [fixture for fixture in fixtures if fixture.matches(call, template)]
    return max(found, key=lambda fixture: fixture.specificity) if found else None
