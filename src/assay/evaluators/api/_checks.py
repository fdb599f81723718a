"""What the recorded calls and the code's result are checked for."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from assay.errors import EvaluatorInputError
from assay.evaluators.agents._match import maximum_matching
from assay.evaluators.api._mock import Fault


@dataclass(frozen=True)
class ExpectedCall:
    method: str
    path: str  # concrete ("/users/1") or a template ("/users/{id}")
    query: dict[str, Any]
    body: Any

    def matches(self, call: dict[str, Any], base_path: str) -> bool:
        if call.get("method") != self.method or not _ok(call):
            return False
        path = str(call.get("path") or "")
        if base_path and path.startswith(base_path):
            path = path[len(base_path) :] or "/"
        target = str(call.get("operation", "")).partition(" ")[2] if "{" in self.path else path
        if target != self.path:
            return False
        query = call.get("query") or {}
        if any(str(query.get(k)) != str(v) for k, v in self.query.items()):
            return False
        return self.body is None or _contains(call.get("body"), self.body)


def _ok(call: dict[str, Any]) -> bool:
    return isinstance(call.get("status"), int) and 200 <= call["status"] < 300


def _contains(actual: Any, expected: Any, exact: bool = False) -> bool:
    """``expected`` is within ``actual``: objects by the keys expected (all keys when
    ``exact``), lists item by item, numbers by value, anything else equal and same type."""
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and (not exact or set(actual) == set(expected))
            and all(k in actual and _contains(actual[k], v, exact) for k, v in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_contains(a, e, exact) for a, e in zip(actual, expected))
        )
    if _number(actual) and _number(expected):
        return bool(actual == expected)
    return type(actual) is type(expected) and bool(actual == expected)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def expected_calls(raw: Any, where: str) -> list[ExpectedCall]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise EvaluatorInputError(f"{where} must be a list of calls")
    calls = []
    for index, item in enumerate(raw):
        here = f"{where}[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            raise EvaluatorInputError(f"{here} needs 'method' and 'path'")
        query = item.get("query") or {}
        if not isinstance(query, dict):
            raise EvaluatorInputError(f"{here}['query'] must be an object")
        calls.append(
            ExpectedCall(str(item.get("method", "GET")).upper(), item["path"], query, item.get("body"))
        )
    return calls


def faults(raw: Any, where: str) -> list[Fault]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise EvaluatorInputError(f"{where} must be a list of faults")
    made = []
    for index, item in enumerate(raw):
        here = f"{where}[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("operation"), str):
            raise EvaluatorInputError(f"{here} needs 'operation' (e.g. 'GET /users/{{id}}')")
        status = item.get("status", 500)
        if status != "timeout" and not (isinstance(status, int) and 400 <= status <= 599):
            raise EvaluatorInputError(f"{here}['status'] must be an HTTP error status or 'timeout'")
        query = item.get("query") or {}
        if not isinstance(query, dict):
            raise EvaluatorInputError(f"{here}['query'] must map query parameters to values")
        times = item.get("times", 1)
        if not isinstance(times, int) or times < 1:
            raise EvaluatorInputError(f"{here}['times'] must be a positive integer")
        made.append(
            Fault(
                item["operation"],
                "timeout" if status == "timeout" else "status",
                status if isinstance(status, int) else 504,
                times,
                float(item.get("delay", 3.0)),
                {str(k): str(v) for k, v in (item.get("headers") or {}).items()},
                {str(k): str(v) for k, v in query.items()},
            )
        )
    return made


@dataclass
class Check:
    name: str
    passed: bool
    detail: str

    def shown(self) -> dict[str, Any]:
        return {"check": self.name, "passed": self.passed, "detail": self.detail}


def check_calls(
    calls: list[dict[str, Any]], expected: list[ExpectedCall], ordered: bool, base_path: str
) -> Check:
    if ordered:
        position = 0
        for call in calls:
            if position < len(expected) and expected[position].matches(call, base_path):
                position += 1
        missing = expected[position:]
    else:
        edges = [[j for j, call in enumerate(calls) if e.matches(call, base_path)] for e in expected]
        paired = {i for i, _ in maximum_matching(edges)}
        missing = [e for i, e in enumerate(expected) if i not in paired]
    if missing:
        first = missing[0]
        order = " (in order)" if ordered else ""
        return Check(
            "expected_calls",
            False,
            f"{len(missing)} expected call(s) not made "
            f"successfully{order}; first: {first.method} {first.path}",
        )
    return Check("expected_calls", True, f"all {len(expected)} expected call(s) made")


def check_valid(calls: list[dict[str, Any]]) -> Check:
    bad = [c for c in calls if c.get("undeclared") or c.get("invalid")]
    if not bad:
        return Check("valid_requests", True, f"{len(calls)} request(s), all in the API")
    first = bad[0]
    why = "not in the API" if first.get("undeclared") else "; ".join(first["invalid"][:3])
    return Check(
        "valid_requests",
        False,
        f"{len(bad)} request(s) not valid; first: {first['method']} {first['path']}: {why}",
    )


def check_retries(calls: list[dict[str, Any]]) -> Check | None:
    """Each injected fault must be followed by a successful call of the same operation."""
    faulted = [i for i, c in enumerate(calls) if c.get("fault")]
    if not faulted:
        return None
    unrecovered = [
        calls[i]
        for i in faulted
        if not any(
            _ok(later) and later.get("operation") == calls[i].get("operation") for later in calls[i + 1 :]
        )
    ]
    if unrecovered:
        first = unrecovered[0]
        return Check(
            "retries",
            False,
            f"no successful retry after the injected {first['fault']} on {first.get('operation')}",
        )
    return Check("retries", True, f"recovered from {len(faulted)} injected fault(s)")


UNSAFE_METHODS = ("POST", "PATCH")
RETRY_AFTER_SLACK = 0.05  # seconds: the mock's own clock and scheduling


def _retry_of(calls: list[dict[str, Any]], index: int) -> dict[str, Any] | None:
    """The next call of the same operation after ``calls[index]``."""
    operation = calls[index].get("operation")
    return next((later for later in calls[index + 1 :] if later.get("operation") == operation), None)


def check_idempotency(calls: list[dict[str, Any]], required: bool) -> Check | None:
    """A retried POST/PATCH repeats the faulted call's ``Idempotency-Key`` (required by
    the example, or because the first call sent one), so the server can tell a retry
    from a second order."""
    retried = [
        (call, _retry_of(calls, index))
        for index, call in enumerate(calls)
        if call.get("fault") and call.get("method") in UNSAFE_METHODS
    ]
    keyed = [
        (call, retry)
        for call, retry in retried
        if retry is not None and (required or "idempotency-key" in (call.get("headers") or {}))
    ]
    if not keyed:
        return None
    for call, retry in keyed:
        key = (call.get("headers") or {}).get("idempotency-key")
        again = (retry.get("headers") or {}).get("idempotency-key")
        if not key or key != again:
            return Check(
                "idempotency",
                False,
                f"the retry of {call.get('operation')} sent Idempotency-Key {again!r} after {key!r}",
            )
    return Check("idempotency", True, f"{len(keyed)} retried call(s) kept their Idempotency-Key")


def check_retry_after(calls: list[dict[str, Any]]) -> Check | None:
    """After a fault that said ``Retry-After: s``, the next call of that operation waits s seconds."""
    waited = []
    for index, call in enumerate(calls):
        seconds = _seconds(call.get("retry_after"))
        retry = _retry_of(calls, index) if call.get("fault") and seconds is not None else None
        if retry is None or seconds is None:
            continue
        answered = float(call.get("at", 0)) + float(call.get("duration_ms") or 0) / 1000
        gap = float(retry.get("at", 0)) - answered
        if gap + RETRY_AFTER_SLACK < seconds:
            return Check(
                "retry_after",
                False,
                f"{call.get('operation')} was retried {max(gap, 0):.2f} s after a Retry-After of {seconds:g} s",
            )
        waited.append(seconds)
    if not waited:
        return None
    return Check("retry_after", True, f"{len(waited)} retry(ies) waited as Retry-After asked")


def _seconds(value: Any) -> float | None:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds >= 0 else None


def check_result(stdout: str, expected: Any) -> Check:
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return Check("result", False, "the code printed no result")
    last = lines[-1].strip()
    try:
        value = json.loads(last)
    except ValueError:
        value = last
    if _contains(value, expected, exact=True):
        return Check("result", True, "the final result is the expected one")
    return Check("result", False, f"the final result {last[:200]!r} is not {json.dumps(expected)[:200]}")
