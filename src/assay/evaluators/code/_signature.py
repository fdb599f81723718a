"""A function's typed signature read from source with ``ast`` (the code is never executed
here), and the Hypothesis strategies that draw arguments of those types."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from assay.errors import GenerationError, require_extra

__all__ = ["GenerationError", "Signature", "read_signature", "strategies_for"]

#: sizes kept small: every drawn case runs in the sandbox, twice
MAX_SIZE = 8
INT_BOUND = 1000


@dataclass(frozen=True)
class Signature:
    name: str
    parameters: tuple[tuple[str, ast.expr], ...]

    def describe(self) -> str:
        return f"{self.name}({', '.join(f'{n}: {ast.unparse(a)}' for n, a in self.parameters)})"


def read_signature(code: str, func_name: str) -> Signature:
    """The parameters and annotations of ``def func_name`` in ``code``."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise GenerationError(f"the reference does not parse (line {exc.lineno}): {exc.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func_name:
            params = node.args.posonlyargs + node.args.args
            untyped = [a.arg for a in params if a.annotation is None]
            if untyped:
                raise GenerationError(
                    f"{func_name}() has parameters without a type annotation: {', '.join(untyped)}"
                )
            return Signature(func_name, tuple((a.arg, a.annotation) for a in params if a.annotation))
    raise GenerationError(f"the reference defines no function {func_name!r}")


def strategies_for(signature: Signature) -> list[Any]:
    """One Hypothesis strategy per parameter."""
    require_extra("hypothesis", "code", feature="property-based test cases")
    return [_strategy(annotation, f"{signature.name}({name})") for name, annotation in signature.parameters]


def _strategy(node: ast.expr, where: str) -> Any:
    from hypothesis import strategies as st

    name = _name(node)
    scalars: dict[str, Any] = {
        "int": st.integers(-INT_BOUND, INT_BOUND),
        "float": st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        "bool": st.booleans(),
        "str": st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=MAX_SIZE),
        "None": st.none(),
    }
    if name in scalars:
        return scalars[name]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # int | None
        return st.one_of(_strategy(node.left, where), _strategy(node.right, where))
    if isinstance(node, ast.Subscript):
        return _generic(_name(node.value), _items(node.slice), where)
    raise GenerationError(f"{where}: no strategy for the annotation {ast.unparse(node)!r}")


def _generic(name: str, items: list[ast.expr], where: str) -> Any:
    from hypothesis import strategies as st

    inner = [_strategy(item, where) for item in items if not _is_ellipsis(item)]
    if name in ("list", "List", "Sequence") and len(inner) == 1:
        return st.lists(inner[0], max_size=MAX_SIZE)
    if name in ("set", "Set", "frozenset") and len(inner) == 1:
        return st.sets(inner[0], max_size=MAX_SIZE)
    if name in ("dict", "Dict", "Mapping") and len(inner) == 2:
        return st.dictionaries(inner[0], inner[1], max_size=MAX_SIZE)
    if name in ("tuple", "Tuple") and items and _is_ellipsis(items[-1]):
        return st.lists(inner[0], max_size=MAX_SIZE).map(tuple)
    if name in ("tuple", "Tuple"):
        return st.tuples(*inner)
    if name == "Optional" and len(inner) == 1:
        return st.one_of(st.none(), inner[0])
    if name == "Union":
        return st.one_of(*inner)
    raise GenerationError(f"{where}: no strategy for {name}[...] with {len(inner)} type argument(s)")


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # typing.List
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation
        return _name(ast.parse(node.value, mode="eval").body)
    return ""


def _items(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis
