"""The sources of a Go test program (HumanEval-X style ``func TestX(t *testing.T)``),
built with ``go test -c`` inside the checker's sandbox: the test itself, a typed proxy of
the entry point written from the declaration the parent parsed (see
``sandbox/_declarations.py``), the prompt's helpers when the declaration came from the
prompt, and a wrapper per Test function that turns a panic into that test's failure."""

from __future__ import annotations

import re
from typing import Any

from .proxies import BadSetup

# std packages a test or a prompt's helpers may use without importing them: added when
# referenced (goimports style), since Go refuses both a missing and an unused import
KNOWN_PACKAGES = {
    "testing": "testing",
    "assert": "github.com/stretchr/testify/assert",
    "math": "math",
    "strings": "strings",
    "strconv": "strconv",
    "sort": "sort",
    "reflect": "reflect",
    "fmt": "fmt",
    "unicode": "unicode",
    "bytes": "bytes",
    "big": "math/big",
    "regexp": "regexp",
    "errors": "errors",
}
TEST_FUNCTION = re.compile(r"^func\s+(Test[A-Za-z0-9_]*)\s*\(\s*(\w+)\s+\*\s*testing\.T\s*\)", re.M)
_PACKAGE = re.compile(r"^[ \t]*package[ \t]+\w+[ \t]*;?", re.M)
_IMPORTS = re.compile(r'^[ \t]*import[ \t]*(?:\((?P<block>[^)]*)\)|(?P<one>(?:\w+[ \t]+)?"[^"\n]*"))', re.M)
_SPEC = re.compile(r'(?:(?P<alias>[\w.]+)[ \t]+)?"(?P<path>[^"\n]+)"')
_TYPE = re.compile(r"^(?:\[\d*\]|\*|map\[[^\]]+\]|\.\.\.)*[\w.{}\[\]*]+$")


def sources(setup: dict[str, Any]) -> dict[str, str]:
    """File name -> text; ``program_test.txt`` is the test as written (for its lines)."""
    declaration = setup.get("declaration")
    if not isinstance(declaration, dict):
        raise BadSetup("the setup frame has no declaration of the entry point")
    test = str(setup.get("test", ""))
    names = [match.group(1) for match in TEST_FUNCTION.finditer(test)]
    if not names:
        raise BadSetup("the test program defines no `func TestXxx(t *testing.T)`")
    files = {
        "program_test.go": _test_file(test),
        "program_test.txt": test,
        "assay_tests_test.go": _wrappers(names),
        "assay_proxy.go": proxy_source(declaration),
    }
    prefix = str(declaration.get("prefix") or "")
    if declaration.get("source") == "prompt" and re.search(r"^(func|type|var|const)\b", prefix, re.M):
        files["assay_prompt.go"] = _with_imports(_without_package_and_imports(prefix), prefix)
    return files


def _test_file(test: str) -> str:
    """The Test functions renamed (their wrappers take the names), the package made
    ``main``, and the imports it lacks added on its first line, so line numbers stay."""
    renamed = TEST_FUNCTION.sub(lambda m: m.group(0).replace(m.group(1), "assayTest_" + m.group(1), 1), test)
    imported = {_import_name(path, alias) for path, alias in _imports(renamed)}
    missing = [
        path
        for name, path in KNOWN_PACKAGES.items()
        if name not in imported and re.search(rf"(?<![\w.]){name}\.", _code_only(renamed))
    ]
    header = "import (" + "; ".join(f'"{path}"' for path in missing) + "); " if missing else ""
    if _PACKAGE.search(renamed):
        return _PACKAGE.sub(lambda m: "package main; " + header, renamed, count=1)
    return "package main; " + header + renamed


def _wrappers(names: list[str]) -> str:
    lines = ['package main\n\nimport "testing"\n']
    for name in dict.fromkeys(names):
        lines.append(f"func {name}(t *testing.T) {{\n\tdefer assayRecover(t)\n\tassayTest_{name}(t)\n}}\n")
    return "\n".join(lines)


def proxy_source(declaration: dict[str, Any]) -> str:
    """``func Name(p0 T0, ...) R`` whose body forwards to ``assayCall``: the types are the
    parent's canonical rendering of whitelisted types, checked again here."""
    name = str(declaration.get("name", ""))
    params = [(str(kind), str(param)) for kind, param in declaration.get("params", [])]
    returns = str(declaration.get("returns") or "")
    results = [r.strip() for r in returns.strip("()").split(",") if r.strip()] if returns else []
    for text in [kind for kind, _ in params] + results:
        if not _TYPE.match(text):
            raise BadSetup(f"not a canonical Go type: {text!r}")
    if not re.fullmatch(r"[A-Za-z_]\w*", name) or not all(re.fullmatch(r"p\d+", p) for _, p in params):
        raise BadSetup(f"the declaration's names are not identifiers: {name!r}")
    returns_error = bool(results) and results[-1] == "error"
    values = results[:-1] if returns_error else results
    variadic = bool(params) and params[-1][0].startswith("...")
    signature = ", ".join(f"{param} {kind}" for kind, param in params)
    body = [f"\tvar r{index} {kind}" for index, kind in enumerate(values)]
    args = ", ".join(param for _, param in params)
    targets = ", ".join(f"&r{index}" for index in range(len(values)))
    call = f"assayCall([]interface{{}}{{{args}}}, {str(variadic).lower()}, []interface{{}}{{{targets}}}, {str(returns_error).lower()})"
    outs = [f"r{index}" for index in range(len(values))]
    if returns_error:
        body.append(f"\terr := {call}")
        outs.append("err")
    else:
        body.append(f"\t_ = {call}")
    if outs:
        body.append("\treturn " + ", ".join(outs))
    imports = 'import "math/big"\n\n' if "big.Int" in signature + returns else ""
    return f"package main\n\n{imports}func {name}({signature}) {returns} {{\n" + "\n".join(body) + "\n}\n"


def _without_package_and_imports(text: str) -> str:
    """Blanked, line for line: the helpers' imports are written again, only those used."""
    text = _PACKAGE.sub("", text, count=1)
    return _IMPORTS.sub(lambda m: re.sub(r"[^\n]", "", m.group(0)), text)


def _with_imports(code: str, original: str) -> str:
    used = []
    for path, alias in _imports(original):
        name = _import_name(path, alias)
        if name != "_" and re.search(rf"(?<![\w.]){re.escape(name)}\.", _code_only(code)):
            used.append(f'{alias + " " if alias else ""}"{path}"')
    known = {_import_name(p, a) for p, a in _imports(original)}
    for name, path in KNOWN_PACKAGES.items():
        if name not in known and name not in ("testing", "assert"):
            if re.search(rf"(?<![\w.]){name}\.", _code_only(code)):
                used.append(f'"{path}"')
    header = "import (" + "; ".join(used) + "); " if used else ""
    return "package main; " + header + code


def _imports(text: str) -> list[tuple[str, str]]:
    found = []
    for match in _IMPORTS.finditer(text):
        for spec in _SPEC.finditer(match.group("block") or match.group("one") or ""):
            found.append((spec.group("path"), spec.group("alias") or ""))
    return found


def _import_name(path: str, alias: str) -> str:
    return alias or path.rstrip("/").split("/")[-1]


def _code_only(text: str) -> str:
    """Without comments and string literals: a package named there is not a use."""
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|`[^`]*`', " ", text, flags=re.S)
