"""In-code suppressions are the candidate's text, not the evaluator's settings.

A comment such as ``# noqa``, ``# nosec``, ``# fmt: off`` or ``// clang-format off`` is
something the generated code says about itself: left to the tools, one line at the top
(``# ruff: noqa``) would turn any code into clean code. So by default each tool runs with
them ignored (ruff ``--ignore-noqa``, bandit ``--ignore-nosec``, cppcheck without
``--inline-suppr``, checkstyle with no suppression filter), and the formatters see the
code with their off-switches defused (``formatted anyway``). ``honour_suppressions=True``
on an evaluator lets the code's comments count; every result says which was the case in
``metadata["suppressions"]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["OPTION", "defuse_format_switches", "honoured", "mode"]

OPTION = "honour_suppressions"

# Each formatter's off-switches. The patterns are a literal followed by at most a run of
# blanks, so a scan is linear in the code. Only the switch's punctuation is changed, keeping
# every line's length, so the formatter's diff is the one of the code as written.
_SWITCHES: Mapping[str, tuple[re.Pattern[str], ...]] = {
    # ruff format: ``# fmt: off``/``on``/``skip`` and black's ``# yapf: disable``/``enable``
    "python": (re.compile(r"(?<![\w-])(fmt|yapf)([ \t]*):"),),
    # clang-format: ``// clang-format off`` and ``/* clang-format off */``
    "cpp": (re.compile(r"(clang)(-)(format)"),),
    # prettier: ``// prettier-ignore`` (and its JSX, CSS and markdown spellings)
    "javascript": (re.compile(r"(prettier)(-)(ignore)"),),
    "typescript": (re.compile(r"(prettier)(-)(ignore)"),),
    # gofmt and google-java-format have no off-switch.
}


def honoured(options: Mapping[str, Any]) -> bool:
    """Whether the evaluator was told to let the code's suppressions count."""
    return bool(options.get(OPTION, False))


def mode(honour: bool) -> str:
    """What ``metadata["suppressions"]`` says."""
    return "honoured" if honour else "ignored"


def defuse_format_switches(language: str, code: str) -> tuple[str, int]:
    """The code with its formatter's off-switches made plain comments, and how many."""
    count = 0
    for pattern in _SWITCHES.get(language, ()):
        code, found = pattern.subn(_defuse, code)
        count += found
    return code, count


def _defuse(match: re.Match[str]) -> str:
    """``fmt: off`` -> ``fmt; off``, ``clang-format`` -> ``clang_format``: same length."""
    first, middle = match.group(1), match.group(2)
    if match.re.groups == 2:  # name, blanks, then the colon
        return f"{first}{middle};"
    return f"{first}_{match.group(3)}"
