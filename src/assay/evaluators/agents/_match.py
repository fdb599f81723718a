"""Matching an agent's tool calls against a reference trajectory.

Modes (as in agentevals): ``strict`` (same calls in the same order), ``unordered`` (the
same calls in any order), ``subset`` (every call the agent made is in the reference: no
extra calls), ``superset`` (every reference call was made: extra calls allowed). Calls
are paired one-to-one by a maximum bipartite matching, so a loose argument rule never
lets one call stand for two.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.evaluators.agents._calls import ToolCall

MODES = ("strict", "unordered", "subset", "superset")
ArgRule = str | Callable[[Any, Any], bool]
NAMED_RULES = ("exact", "ignore", "case_insensitive", "contains", "approx")
ARGS_MODES = ("exact", "subset", "ignore")
APPROX_TOLERANCE = 1e-6


@dataclass(frozen=True)
class ArgumentRules:
    """How arguments are compared.

    ``args``: ``exact`` (same names and values), ``subset`` (the reference's arguments
    must be present and match; extra ones are allowed) or ``ignore`` (names only).
    ``per_argument``: ``{tool: {argument: rule}}``, a rule being ``"exact"``,
    ``"ignore"``, ``"case_insensitive"``, ``"contains"`` (the reference's text occurs in
    the actual one), ``"approx"`` (numbers within 1e-6 relative), or a function
    ``(actual, expected) -> bool``. Tool ``"*"`` applies to every tool.
    """

    args: str = "exact"
    per_argument: Mapping[str, Mapping[str, ArgRule]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.args not in ARGS_MODES:
            raise ValueError(f"unknown args mode {self.args!r}; known: {', '.join(ARGS_MODES)}")
        for tool, rules in self.per_argument.items():
            for argument, rule in rules.items():
                if not callable(rule) and rule not in NAMED_RULES:
                    raise ValueError(
                        f"rule for {tool}.{argument} must be one of "
                        f"{', '.join(NAMED_RULES)} or a function, got {rule!r}"
                    )

    def rule(self, tool: str, argument: str) -> ArgRule:
        for scope in (tool, "*"):
            rules = self.per_argument.get(scope)
            if rules is not None and argument in rules:
                return rules[argument]
        return "exact"

    def calls_match(self, actual: ToolCall, expected: ToolCall) -> bool:
        if actual.name != expected.name:
            return False
        if self.args == "ignore":
            return True
        names = set(expected.args) if self.args == "subset" else set(actual.args) | set(expected.args)
        for argument in names:
            rule = self.rule(expected.name, argument)
            if rule == "ignore":
                continue
            if argument not in actual.args or argument not in expected.args:
                return False
            if not _value_matches(rule, actual.args[argument], expected.args[argument]):
                return False
        return True


def _value_matches(rule: ArgRule, actual: Any, expected: Any) -> bool:
    if callable(rule):
        return bool(rule(actual, expected))
    if rule == "case_insensitive" and isinstance(actual, str) and isinstance(expected, str):
        return actual.casefold() == expected.casefold()
    if rule == "contains" and isinstance(actual, str) and isinstance(expected, str):
        return expected.casefold() in actual.casefold()
    if rule == "approx" and _is_number(actual) and _is_number(expected):
        return math.isclose(actual, expected, rel_tol=APPROX_TOLERANCE, abs_tol=APPROX_TOLERANCE)
    if _is_number(actual) and _is_number(expected):
        return bool(actual == expected)  # 2 and 2.0 are the same argument in JSON
    return type(actual) is type(expected) and bool(actual == expected)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class Match:
    passed: bool
    pairs: list[tuple[int, int]]  # (actual index, reference index)
    unmatched_actual: list[int]
    unmatched_reference: list[int]
    first_mismatch: int | None = None  # strict mode: the first position that differs


def match_trajectory(
    actual: list[ToolCall], reference: list[ToolCall], mode: str, rules: ArgumentRules
) -> Match:
    if mode not in MODES:
        raise ValueError(f"unknown trajectory mode {mode!r}; known: {', '.join(MODES)}")
    if mode == "strict":
        return _strict(actual, reference, rules)
    pairs = _bipartite(actual, reference, rules)
    left = [i for i in range(len(actual)) if i not in {a for a, _ in pairs}]
    right = [j for j in range(len(reference)) if j not in {r for _, r in pairs}]
    passed = {"unordered": not left and not right, "subset": not left, "superset": not right}[mode]
    return Match(passed, sorted(pairs), left, right)


def _strict(actual: list[ToolCall], reference: list[ToolCall], rules: ArgumentRules) -> Match:
    pairs: list[tuple[int, int]] = []
    for index, (a, r) in enumerate(zip(actual, reference)):
        if not rules.calls_match(a, r):
            return Match(
                False,
                pairs,
                list(range(index, len(actual))),
                list(range(index, len(reference))),
                first_mismatch=index,
            )
        pairs.append((index, index))
    common = len(pairs)
    passed = len(actual) == len(reference)
    return Match(
        passed,
        pairs,
        list(range(common, len(actual))),
        list(range(common, len(reference))),
        first_mismatch=None if passed else common,
    )


def _bipartite(
    actual: list[ToolCall], reference: list[ToolCall], rules: ArgumentRules
) -> list[tuple[int, int]]:
    edges = [[j for j, r in enumerate(reference) if rules.calls_match(a, r)] for a in actual]
    return maximum_matching(edges)


def maximum_matching(edges: list[list[int]]) -> list[tuple[int, int]]:
    """Pairs (left, right) of a maximum bipartite matching, ``edges[left]`` listing the
    rights each left may pair with (Kuhn's augmenting paths: inputs here are short)."""
    owner: dict[int, int] = {}  # right -> left

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(edges)):
        augment(i, set())
    return [(i, j) for j, i in owner.items()]
