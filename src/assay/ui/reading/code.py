"""Code in stored values, highlighted by language on the server (Pygments, whose HTML
formatter escapes every token; the colours are the vendored ``static/highlight.css``).

A text is code when it says so: a Markdown fence with a language (```` ```python ````,
a model's usual way), or a value under a key named for a language (``"sql": ...``), or
a value under a code-ish key (``code``, ``program``, ``solution``...) that parses as
Python. Nothing is guessed from arbitrary prose, and input is bounded before a lexer sees it.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markupsafe import Markup

__all__ = ["Code", "MAX_CODE_CHARS", "code_of", "highlighted", "stylesheet"]

MAX_CODE_CHARS = 20_000
CSS_SCOPE = ".hl"

_FENCE = re.compile(r"\A\s*```([\w+#.-]{1,20})[ \t]*\n(.*?)\n?```\s*\Z", re.DOTALL)
_LANGUAGE_KEYS = {
    "python": "python",
    "py": "python",
    "sql": "sql",
    "query": "sql",
    "go": "go",
    "golang": "go",
    "java": "java",
    "cpp": "cpp",
    "c++": "cpp",
    "c": "c",
    "javascript": "javascript",
    "js": "javascript",
    "typescript": "typescript",
    "ts": "typescript",
    "rust": "rust",
    "bash": "bash",
    "shell": "bash",
    "json": "json",
}
_CODE_KEYS = {"code", "program", "solution", "completion", "function", "source", "generated_code"}


@dataclass(frozen=True)
class Code:
    text: str
    language: str  # a Pygments lexer name


def code_of(text: str, key: str | None = None) -> Code | None:
    """The code in ``text`` and its language, or None when it is not (plainly) code."""
    if len(text) > MAX_CODE_CHARS:
        return None
    fenced = _FENCE.match(text) if text.lstrip().startswith("```") else None
    if fenced is not None:
        language = _LANGUAGE_KEYS.get(fenced.group(1).lower(), fenced.group(1).lower())
        return Code(fenced.group(2), language) if _lexer(language) is not None else None
    name = (key or "").lower()
    if name in _LANGUAGE_KEYS and "\n" in text:
        return Code(text, _LANGUAGE_KEYS[name])
    if name in _CODE_KEYS and "\n" in text and _parses_as_python(text):
        return Code(text, "python")
    return None


def highlighted(code: Code) -> Markup:
    """The code as escaped HTML with token classes (Pygments escapes every token)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter

    lexer = _lexer(code.language)
    if lexer is None:
        return Markup.escape(code.text)
    return Markup(highlight(code.text, lexer, HtmlFormatter(nowrap=True)))  # noqa: S704 - escaped by Pygments


def stylesheet() -> str:
    """The token colours, scoped to ``.hl`` (``static/highlight.css`` is this text)."""
    from pygments.formatters import HtmlFormatter

    rules = str(HtmlFormatter(style="default").get_style_defs(CSS_SCOPE)).splitlines()
    return "\n".join(rule for rule in rules if rule.startswith(CSS_SCOPE + " ")) + "\n"  # no global pre rule


@lru_cache(maxsize=64)
def _lexer(language: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _parses_as_python(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # e.g. an invalid escape in a string
            ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True
