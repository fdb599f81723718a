"""The Go entry point's declaration, read in the trusted parent so the test program can be
compiled against a typed proxy of it.

Only the header is read (``func Name(params) results``), never the body, and only types
from a small grammar: builtin types, ``[]T``, ``[N]T``, ``*T``, ``map[K]V``, ``struct{}``,
``interface{}``/``any`` and ``*big.Int``; ``error`` as the last result. The proxy is
generated from the parsed types, re-rendered here, so no text of the candidate's reaches
the checker's compiler: a header with anything else is refused."""

from __future__ import annotations

import re
from dataclasses import dataclass

BUILTIN_TYPES = frozenset(
    "bool string int int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 uintptr "
    "byte rune float32 float64 any".split()
)
# the tokens a header may hold: names, numbers, punctuation; anything else ends the parse
_TOKEN = re.compile(
    r"\s*(\.\.\.|interface\s*\{\s*\}|struct\s*\{\s*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[()\[\],*.{])"
)
_MAX_HEADER = 4000  # a header longer than this is not a HumanEval-style declaration
_MAX_ARRAY = 1 << 20
_NAME = "?"  # marks a lone name in a parameter list: a grouped name, or a type not allowed


class DeclarationError(ValueError):
    """The header is missing or uses what the grammar does not allow."""


@dataclass(frozen=True)
class GoDeclaration:
    name: str
    params: tuple[str, ...]  # canonical type texts; a variadic last one is its ``[]T``
    variadic: bool
    results: tuple[str, ...]  # without a trailing ``error``
    returns_error: bool

    @property
    def param_types(self) -> tuple[str, ...]:
        """As Go writes them: a variadic last parameter is ``...T``."""
        if not self.variadic:
            return self.params
        return (*self.params[:-1], "..." + self.params[-1][2:])

    @property
    def returns(self) -> str:
        """The result list as Go writes it: ``""``, ``T`` or ``(T1, T2, error)``."""
        results = [*self.results, *(["error"] if self.returns_error else [])]
        return results[0] if len(results) == 1 else f"({', '.join(results)})" if results else ""


def find_go_declaration(source: str, name: str) -> tuple[GoDeclaration, int] | None:
    """The declaration of top-level ``func name(...)`` in ``source`` and where its line
    starts, or None if there is no such line. Raises DeclarationError when the header is
    there but not allowed."""
    match = re.search(rf"^func[ \t]+{re.escape(name)}[ \t]*(?=[(\[])", source, re.M)
    if match is None:
        return None
    header = source[match.end() : match.end() + _MAX_HEADER]
    try:
        return _Parser(_tokens(header), name).declaration(), match.start()
    except DeclarationError as refused:
        raise DeclarationError(f"the declaration of {name}: {refused}") from None


def _tokens(text: str) -> list[str]:
    tokens, position = [], 0
    while position < len(text):
        found = _TOKEN.match(text, position)
        if found is None:
            if text[position:].strip() == "":
                break
            raise DeclarationError(f"{text[position : position + 20].strip()!r} is not part of a type")
        token = re.sub(r"\s+", "", found.group(1))
        tokens.append(token)
        position = found.end()
        if token == "{":
            break  # the body starts: nothing after it is read
    return tokens


class _Parser:
    def __init__(self, tokens: list[str], name: str) -> None:
        self.tokens, self.at, self.name = tokens, 0, name

    def peek(self) -> str:
        return self.tokens[self.at] if self.at < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token == "" or (expected is not None and token != expected):
            raise DeclarationError(
                f"expected {expected or 'more'} in the header of {self.name}, got {token!r}"
            )
        self.at += 1
        return token

    def declaration(self) -> GoDeclaration:
        if self.peek() == "[":
            raise DeclarationError(f"{self.name} is generic: type parameters are not supported")
        params, variadic = self.parameters()
        results = self.results()
        self.take("{")
        returns_error = bool(results) and results[-1] == "error"
        if returns_error:
            results = results[:-1]
        if "error" in results or "error" in params:
            raise DeclarationError("`error` is allowed only as the last result")
        return GoDeclaration(self.name, tuple(params), variadic, tuple(results), returns_error)

    def parameters(self) -> tuple[list[str], bool]:
        """``(a, b int, c []string)`` or ``(int, string)``: Go says a list is all named or
        all unnamed, so names are told from types by the group's shape."""
        self.take("(")
        groups: list[list[str]] = []  # each entry: the tokens of one comma-separated item
        while self.peek() != ")":
            groups.append(self.item())
            if self.peek() == ",":
                self.take(",")
        self.take(")")
        named = any(len(item) == 2 for item in groups)
        types: list[str] = []
        pending = 0  # names waiting for the type that follows them
        variadic = False
        for index, item in enumerate(groups):
            if named and len(item) == 1:
                if not item[0].startswith(_NAME):
                    raise DeclarationError("mixed named and unnamed parameters")
                pending += 1
                continue
            text = self.checked(item[-1])
            if text.startswith("..."):
                if index != len(groups) - 1 or pending:
                    raise DeclarationError("`...` only on the last parameter")
                variadic, text = True, "[]" + text[3:]
            types.extend([text] * (pending + 1))
            pending = 0
        if pending:
            raise DeclarationError("parameter names without a type")
        return types, variadic

    def item(self) -> list[str]:
        """One parameter: ``type``, ``name type`` or ``name ...type``."""
        if _is_name(self.peek()) and self.peek() not in BUILTIN_TYPES | {"map", "error"}:
            name = self.take()
            if self.peek() in (",", ")"):
                return [_NAME + name]  # a name grouped with the next, or a named type
            return [name, self.variadic_type()]
        return [self.variadic_type()]

    def variadic_type(self) -> str:
        if self.peek() == "...":
            self.take()
            return "..." + self.type()
        return self.type()

    def results(self) -> list[str]:
        if self.peek() == "{":
            return []
        if self.peek() != "(":
            return [self.type(result=True)]
        self.take("(")
        items: list[list[str]] = []
        while self.peek() != ")":
            if _is_name(self.peek()) and self.peek() not in BUILTIN_TYPES | {"map", "error"}:
                name = self.take()
                lone = self.peek() in (",", ")")
                items.append([_NAME + name] if lone else [name, self.type(result=True)])
            else:
                items.append([self.type(result=True)])
            if self.peek() == ",":
                self.take(",")
        self.take(")")
        named = any(len(item) == 2 for item in items)
        types, pending = [], 0
        for item in items:
            if named and len(item) == 1:
                if not item[0].startswith(_NAME):
                    raise DeclarationError("mixed named and unnamed results")
                pending += 1
                continue
            types.extend([self.checked(item[-1])] * (pending + 1))
            pending = 0
        if pending:
            raise DeclarationError("result names without a type")
        return types

    def checked(self, text: str) -> str:
        if text.startswith(_NAME):
            raise DeclarationError(self.unknown(text[len(_NAME) :]))
        return text

    def unknown(self, token: str) -> str:
        return (
            f"the type {token!r} is not one the test program can mirror "
            "(builtin types, slices, arrays, maps, pointers, *big.Int)"
        )

    def type(self, result: bool = False) -> str:
        token = self.take()
        if token in BUILTIN_TYPES:
            return token
        if token == "error" and result:
            return "error"
        if token in ("interface{}", "struct{}"):
            return token
        if token == "*":
            if self.peek() == "big":
                self.take("big")
                self.take(".")
                self.take("Int")
                return "*big.Int"
            return "*" + self.type()
        if token == "[":
            if self.peek() == "]":
                self.take("]")
                return "[]" + self.type()
            size = self.take()
            if not size.isdigit() or int(size) > _MAX_ARRAY:
                raise DeclarationError(f"an array length must be a number, got {size!r}")
            self.take("]")
            return f"[{int(size)}]" + self.type()
        if token == "map":
            self.take("[")
            key = self.type()
            self.take("]")
            return f"map[{key}]" + self.type()
        raise DeclarationError(self.unknown(token))


def _is_name(token: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token) is not None
