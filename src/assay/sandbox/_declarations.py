"""The entry point's declaration for a compiled checker, read in the trusted parent.

A compiled test program is built against a typed proxy of the candidate's function: a
function with the same declaration whose body forwards each call to the candidate's
process. The declaration comes from trusted text, the prompt, when the prompt declares the
entry point; otherwise from the candidate's program, but then only a header whose every
token fits a small grammar of whitelisted types is accepted, and the proxy is written from
the parsed tokens, never copied: the checker compiles no text of the candidate that could
carry code (a default argument, a ``decltype``, a macro, an attribute...).

Adding a language: a parser ``(text, entry, trusted) -> Declaration | None`` in
``PARSERS`` (``None``: the text declares no such function; ``DeclarationRefused``: it
does, in a form the proxy cannot take).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from assay.sandbox import _go_declaration as go_declaration

__all__ = ["Declaration", "DeclarationRefused", "PARSERS", "Param", "checker_declaration"]


class DeclarationRefused(ValueError):
    """The entry point's declaration cannot be turned into a proxy. Internal: the job
    turns it into a failed verdict (``kind: "declaration"``), so it is no public error."""


@dataclass(frozen=True)
class Param:
    type: str
    name: str


@dataclass(frozen=True)
class Declaration:
    """``prefix``: the trusted text before the header (the prompt's includes, imports and
    helpers; empty when the declaration comes from the candidate). ``owner``: the class
    that holds the method (Java)."""

    name: str
    returns: str
    params: tuple[Param, ...]
    source: str = "prompt"  # or "candidate"
    prefix: str = ""
    modifiers: tuple[str, ...] = ()
    owner: str = ""

    def frame(self) -> dict[str, Any]:
        """Plain data for the checker's setup frame."""
        return {
            "name": self.name,
            "returns": self.returns,
            "params": [[p.type, p.name] for p in self.params],
            "source": self.source,
            "prefix": self.prefix,
            "modifiers": list(self.modifiers),
            "owner": self.owner,
        }


Parser = Callable[[str, str, bool], "Declaration | None"]


def checker_declaration(language: str, prompt: str, program: str, entry: str) -> Declaration:
    """The prompt's declaration of ``entry`` if it has one, else the candidate's (strict)."""
    parse = PARSERS[language]
    if prompt:
        try:
            found = parse(prompt, entry, True)
        except DeclarationRefused:
            found = None  # an unusual prompt: the candidate's header may still do
        if found is not None:
            return replace(found, source="prompt")
    found = parse(program, entry, False)
    if found is None:
        raise DeclarationRefused(
            f"no declaration of {entry!r} in the prompt or in the candidate's program "
            "(the test program is compiled against it)"
        )
    return replace(found, source="candidate", prefix="")


# -- shared lexing -------------------------------------------------------------------------
_COMMENT_OR_STRING = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def blank_comments(text: str, preprocessor: bool = False) -> str:
    """``text`` with comments, string and char literals (and ``#`` lines) turned into
    spaces of the same length, so offsets stay true and no delimiter hides in them."""

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    out = _COMMENT_OR_STRING.sub(blank, text)
    if preprocessor:
        out = re.sub(r"(?m)^[ \t]*#[^\n]*", blank, out)
    return out


_TOKEN = re.compile(
    r"\s*(?:(?P<word>[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.)[A-Za-z_][A-Za-z0-9_]*)*)|(?P<punct>&&|[<>,&*\[\]]))"
)


def tokens(text: str, where: str) -> list[str]:
    """Words (maybe qualified) and the punctuation a type may hold; anything else refused."""
    out, at, end = [], 0, len(text.rstrip())
    while at < end:
        match = _TOKEN.match(text, at)
        if match is None:
            shown = text[at:].strip()[:40]
            raise DeclarationRefused(f"{where}: {shown!r} is not part of a type")
        out.append(match.group("word") or match.group("punct") or "")
        at = match.end()
    return out


def split_top(text: str, separator: str = ",") -> list[str]:
    """``text`` split at ``separator`` outside angle and square brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "<["
        depth -= char in ">]"
        if char == separator and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current)
    return parts


@dataclass(frozen=True)
class Header:
    """Where the text declares ``entry`` with a body: the text before the name (the
    return type and modifiers, back to the previous statement) and the parameters."""

    start: int
    before: str
    params: str


_BODY_AFTER = re.compile(r"\s*(?:throws\s[\w.,\s]*)?\{")  # greedy, so linear: "{" or not
_CALL_BLOCKERS = re.compile(r"\b(return|new|else)\b|[=(]")


def find_header(text: str, entry: str, preprocessor: bool) -> Header | None:
    """The first definition of ``entry``: ``... entry(params) ... {`` at statement level.

    Linear in ``text`` (it is the candidate's): parentheses are paired in one pass, the
    statement starts are looked up by bisection, and only the first ``entry(`` of a
    statement is examined (a later one has that ``(`` before it, so it is a call).
    """
    clean = blank_comments(text, preprocessor)
    closing = _paired_parens(clean)
    starts = [index + 1 for index, char in enumerate(clean) if char in ";{}"]
    examined = -1
    for match in re.finditer(rf"(?<![\w.:]){re.escape(entry)}\s*\(", clean):
        start = (
            starts[bisect.bisect_right(starts, match.start()) - 1]
            if starts and starts[0] <= match.start()
            else 0
        )
        if start == examined:
            continue
        examined = start
        close = closing.get(match.end() - 1)
        if close is None or _BODY_AFTER.match(clean, close + 1) is None:
            continue
        before = clean[start : match.start()]
        if not before.strip() or _CALL_BLOCKERS.search(before):
            continue  # a call, not a definition
        start += len(before) - len(before.lstrip())
        return Header(start, clean[start : match.start()], clean[match.end() : close])
    return None


def _paired_parens(text: str) -> dict[int, int]:
    """The offset of each ``(`` that is closed, mapped to its ``)``."""
    pairs, open_at = {}, []
    for found in re.finditer(r"[()]", text):
        if found.group() == "(":
            open_at.append(found.start())
        elif open_at:
            pairs[open_at.pop()] = found.start()
    return pairs


# -- C++ ------------------------------------------------------------------------------------
CPP_SCALARS = {
    "bool", "char", "short", "int", "long", "float", "double", "unsigned", "signed", "void",
    "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
    "uint64_t", "string",
}  # fmt: skip
CPP_TEMPLATES = {"vector", "map", "unordered_map", "set", "unordered_set", "pair", "tuple", "optional"}
CPP_DROPPED = {"static", "inline", "constexpr"}
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_cpp(text: str, entry: str, trusted: bool) -> Declaration | None:
    header = find_header(text, entry, preprocessor=True)
    if header is None:
        return None
    where = f"the declaration of {entry}"
    words = [w for w in tokens(header.before, where) if w not in CPP_DROPPED]
    returns = _cpp_type(words, trusted, f"{where}: return type")
    params = []
    for index, part in enumerate(p for p in split_top(header.params) if p.strip() != "void"):
        found = tokens(part, where)
        if len(found) < 2 or not IDENTIFIER.match(found[-1]):
            raise DeclarationRefused(f"{where}: parameter {index + 1} needs a type and a name")
        params.append(Param(_cpp_type(found[:-1], trusted, f"{where}: parameter {found[-1]}"), found[-1]))
    _check_names(params, where)
    return Declaration(entry, returns, tuple(params), prefix=text[: header.start])


def _cpp_type(words: list[str], trusted: bool, where: str) -> str:
    """The type as tokens joined again; strict: whitelisted names, templates with
    arguments, ``const`` and a trailing ``&`` only."""
    if not words:
        raise DeclarationRefused(f"{where}: no type")
    if not trusted:
        _cpp_strict(words, where)
    if words.count("<") != words.count(">"):
        raise DeclarationRefused(f"{where}: unbalanced angle brackets")
    out = ""
    for word in words:
        glue = word in "<>,&*" or out.endswith("<") or not out
        out += word if glue else " " + word
    return out


def _cpp_strict(words: list[str], where: str) -> None:
    depth, previous = 0, "<"
    for index, word in enumerate(words):
        base = word[5:] if word.startswith("std::") else word
        if word == "<":
            if previous.removeprefix("std::") not in CPP_TEMPLATES:
                raise DeclarationRefused(f"{where}: '<' after {previous!r}")
            depth += 1
        elif word == ">":
            depth -= 1
        elif word == "&":
            if index != len(words) - 1:
                raise DeclarationRefused(f"{where}: '&' inside a type")
        elif word == "," and depth > 0 or word == "const":
            pass
        elif base in CPP_TEMPLATES:
            if index + 1 >= len(words) or words[index + 1] != "<":
                raise DeclarationRefused(f"{where}: {word} without its arguments")
        elif base not in CPP_SCALARS:
            raise DeclarationRefused(f"{where}: {word!r} is not a type the proxy accepts")
        if depth < 0:
            raise DeclarationRefused(f"{where}: unbalanced angle brackets")
        previous = word


def _check_names(params: list[Param], where: str) -> None:
    names = [p.name for p in params]
    for name in names:
        if name.startswith("__") or name.lower().startswith("assay"):
            raise DeclarationRefused(f"{where}: the parameter name {name!r} is reserved")
    if len(set(names)) != len(names):
        raise DeclarationRefused(f"{where}: two parameters share a name")


# -- Java -----------------------------------------------------------------------------------
JAVA_PRIMITIVES = {"boolean", "byte", "char", "short", "int", "long", "float", "double", "void"}
JAVA_CLASSES = {
    "String", "Integer", "Long", "Short", "Byte", "Character", "Boolean", "Float", "Double",
    "Object", "Number", "BigInteger", "BigDecimal", "List", "ArrayList", "LinkedList",
    "Collection", "Map", "HashMap", "TreeMap", "LinkedHashMap", "Set", "HashSet", "TreeSet",
    "LinkedHashSet", "Optional",
}  # fmt: skip
JAVA_PACKAGES = ("java.util.", "java.lang.", "java.math.")
JAVA_MODIFIERS = {"public", "private", "protected", "static", "final"}


def parse_java(text: str, entry: str, trusted: bool) -> Declaration | None:
    header = find_header(text, entry, preprocessor=False)
    if header is None:
        return None
    where = f"the declaration of {entry}"
    words = tokens(header.before, where)
    modifiers = []
    while words and words[0] in JAVA_MODIFIERS | {"synchronized"}:
        word = words.pop(0)
        if word != "synchronized":
            modifiers.append(word)
    returns = _java_type(words, trusted, f"{where}: return type")
    params = []
    for index, part in enumerate(split_top(header.params)):
        found = [w for w in tokens(part, where) if w != "final"]
        if len(found) < 2 or not IDENTIFIER.match(found[-1]):
            raise DeclarationRefused(f"{where}: parameter {index + 1} needs a type and a name")
        params.append(Param(_java_type(found[:-1], trusted, f"{where}: parameter {found[-1]}"), found[-1]))
    _check_names(params, where)
    owner = re.findall(r"\bclass\s+([A-Za-z_]\w*)", blank_comments(text[: header.start]))
    if owner and owner[-1].startswith("Assay"):
        raise DeclarationRefused(f"{where}: the class name {owner[-1]!r} is reserved for the harness")
    return Declaration(
        entry,
        returns,
        tuple(params),
        prefix=text[: header.start],
        modifiers=tuple(modifiers),
        owner=owner[-1] if owner else "Solution",
    )


def _java_type(words: list[str], trusted: bool, where: str) -> str:
    if not words:
        raise DeclarationRefused(f"{where}: no type")
    depth, previous = 0, "<"
    for index, word in enumerate(words):
        if word == "<":
            depth += 1
        elif word == ">":
            depth -= 1
        elif word == "[":
            if index + 1 >= len(words) or words[index + 1] != "]":
                raise DeclarationRefused(f"{where}: '[' without ']'")
        elif word == "]" or word == "," and depth > 0:
            pass
        elif IDENTIFIER.match(word.replace(".", "_")) and previous in ("<", ",", "?"):
            base = next((word[len(p) :] for p in JAVA_PACKAGES if word.startswith(p)), word)
            if not trusted and base not in JAVA_PRIMITIVES | JAVA_CLASSES:
                raise DeclarationRefused(f"{where}: {word!r} is not a type the proxy accepts")
        else:
            raise DeclarationRefused(f"{where}: {word!r} is not part of a type")
        if depth < 0:
            raise DeclarationRefused(f"{where}: unbalanced angle brackets")
        previous = word
    if depth != 0:
        raise DeclarationRefused(f"{where}: unbalanced angle brackets")
    return "".join(w + " " if w == "," else w for w in words)


# -- Go -------------------------------------------------------------------------------------
def parse_go(text: str, entry: str, trusted: bool) -> Declaration | None:
    """Go's grammar is strict for trusted text too (see ``_go_declaration``); the prompt's
    text before the header is the prefix: its imports and helpers."""
    try:
        found = go_declaration.find_go_declaration(text, entry)
    except go_declaration.DeclarationError as refused:
        raise DeclarationRefused(str(refused)) from None
    if found is None:
        return None
    header, start = found
    params = tuple(Param(kind, f"p{index}") for index, kind in enumerate(header.param_types))
    return Declaration(entry, header.returns, params, prefix=text[:start])


PARSERS: dict[str, Parser] = {"cpp": parse_cpp, "java": parse_java, "go": parse_go}
