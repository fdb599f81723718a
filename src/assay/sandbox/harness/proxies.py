"""The sources of a compiled test program: the trusted prefix, a typed proxy of the entry
point (written from the declaration the parent parsed, see ``sandbox/_declarations.py``)
and the test program itself. Runs inside the checker's sandbox, before the compiler."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# a declaration from the candidate has no prompt's includes: the usual ones (lighter than
# <bits/stdc++.h>, which doubles the compile time; assay.hpp brings the containers)
CPP_PRELUDE = (
    "".join(
        f"#include <{name}>\n" for name in ("algorithm", "cassert", "climits", "cmath", "cstdlib", "numeric")
    )
    + "using namespace std;\n"
)
JAVA_PRELUDE = "import java.util.*;\nimport java.lang.*;\nimport java.math.*;\n\n"
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class BadSetup(Exception):
    """The parent's setup frame lacks what the proxy needs (a bug, not a candidate's doing)."""


@dataclass(frozen=True)
class Proxied:
    returns: str
    name: str
    params: list[tuple[str, str]]
    source: str
    prefix: str
    modifiers: list[str]
    owner: str


def proxied(setup: dict[str, Any]) -> Proxied:
    found = setup.get("declaration")
    if not isinstance(found, dict):
        raise BadSetup("the setup frame has no declaration of the entry point")
    params = [(str(kind), str(name)) for kind, name in found.get("params", [])]
    names = [found.get("name"), found.get("owner") or "Solution", *(name for _, name in params)]
    if not all(isinstance(n, str) and IDENTIFIER.match(n) for n in names):
        raise BadSetup(f"the declaration holds a name that is not an identifier: {names!r}")
    return Proxied(
        returns=str(found["returns"]),
        name=str(found["name"]),
        params=params,
        source=str(found.get("source", "")),
        prefix=str(found.get("prefix", "")),
        modifiers=[str(m) for m in found.get("modifiers", [])],
        owner=str(found.get("owner") or "Solution"),
    )


# -- C++ -----------------------------------------------------------------------------------
def cpp_source(setup: dict[str, Any], checker_header: str) -> str:
    """The proxy forwards through ``assay::proxy<R>`` (harness/cpp/assay_checker.hpp); the
    test's ``main`` is renamed so that the harness's own ``main`` drives it, and ``#line``
    keeps the test's line numbers in assertion messages."""
    entry = proxied(setup)
    prefix = entry.prefix if entry.source == "prompt" else CPP_PRELUDE
    params = ", ".join(f"{kind} {name}" for kind, name in entry.params)
    args = "".join(f", {name}" for _, name in entry.params)
    test = returning_main(str(setup.get("test", "")))
    return (
        f'#include "{checker_header}"\n'
        f"{prefix}\n"
        f"{entry.returns} {entry.name}({params}) {{\n"
        f'    return assay::proxy<{entry.returns}>("{entry.name}"{args});\n'
        "}\n"
        "#define main assay_test_main\n"
        '#line 1 "test.cpp"\n'
        f"{test}\n"
        "#undef main\n"
        "ASSAY_CHECKER_MAIN(assay_test_main)\n"
    )


_SKIPPED = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def returning_main(test: str) -> str:
    """``return 0;`` before the closing brace of the test's ``main``: renamed, it is an
    ordinary function, where falling off the end (legal in ``main``) is undefined."""
    clean = _SKIPPED.sub(lambda m: " " * len(m.group(0)), test)
    found = re.search(r"\bint\s+main\s*\([^)]*\)\s*\{", clean)
    if found is None:
        return test
    depth = 0
    for index in range(found.end() - 1, len(clean)):
        depth += {"{": 1, "}": -1}.get(clean[index], 0)
        if depth == 0:
            return test[:index] + "return 0; " + test[index:]
    return test


# -- Java ----------------------------------------------------------------------------------
def java_source(setup: dict[str, Any]) -> tuple[str, str, int]:
    """(class name of the test, the source of its file, lines before the test). The proxy
    method forwards with its own reflective ``Method`` (an anonymous class's enclosing
    method), whose generic return type drives the decoding of the reply."""
    entry = proxied(setup)
    imports, test = _java_imports(str(setup.get("test", "")))
    main = java_main_class(test)
    if entry.source == "prompt":
        # one public class a file: the test's
        head = re.sub(rf"\bpublic\s+(?=(?:final\s+)?class\s+{entry.owner}\b)", "", entry.prefix)
    else:
        head = f"{JAVA_PRELUDE}class {entry.owner} {{\n"
    head = imports + head
    params = ", ".join(f"{kind} {name}" for kind, name in entry.params)
    args = ", ".join(name for _, name in entry.params)
    modifiers = "".join(m + " " for m in entry.modifiers)
    call = (
        "AssayChecker.call(new Object() {}.getClass().getEnclosingMethod(), "
        f'"{entry.name}", new Object[] {{{args}}})'
    )
    body = f"{call};" if entry.returns == "void" else f"return ({entry.returns}) {call};"
    head += f"    {modifiers}{entry.returns} {entry.name}({params}) {{ {body} }}\n}}\n"
    return main, head + test, head.count("\n")


def _java_imports(test: str) -> tuple[str, str]:
    """The test's own imports (they must come first in the file), and the test with blank
    lines in their place, so that its line numbers stay true."""
    imports = re.findall(r"(?m)^[ \t]*import\s+(?:static\s+)?[\w.*]+\s*;[ \t]*$", test)
    kept = re.sub(r"(?m)^[ \t]*import\s+(?:static\s+)?[\w.*]+\s*;[ \t]*$", "", test)
    return "".join(line.strip() + "\n" for line in imports), kept


def java_main_class(test: str) -> str:
    """The test's class holding ``main``: the public one, else the first."""
    public = re.search(r"^\s*public\s+(?:final\s+)?class\s+(\w+)", test, re.M)
    if public:
        return public.group(1)
    first = re.search(r"\bclass\s+(\w+)", test)
    return first.group(1) if first else "Main"
