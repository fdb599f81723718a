"""Every parser the trusted parent runs on a candidate's text is linear in it: 10x the
input costs at most ~12x the time (tests/_linear.py), on the inputs that made the old
patterns quadratic (``"public " * 16000`` froze the parent 6.5 s with the GIL held)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from assay.sandbox import get_language
from assay.sandbox._declarations import DeclarationRefused, parse_cpp, parse_java

HOSTILE_TEXTS: dict[str, Callable[[int], str]] = {
    "modifiers_without_end": lambda n: "class A {\n" + "public " * n,
    "calls_on_one_line": lambda n: "class A {\n" + "int f(" * n,
    "calls_one_per_line": lambda n: "class A {\n" + "int f(\n" * n,
    "blank_lines": lambda n: "class A {\n" + " \n" * n + "f",
    "types_without_end": lambda n: "class A {\n" + "int " * n + "f() {",
    "open_comment": lambda n: "class A {\n" + "int f( /*" * n,
}
LANGUAGES = ["python", "javascript", "typescript", "go", "java", "cpp"]


def quietly(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def run(text: str) -> Any:
        try:
            return parse(text)
        except DeclarationRefused:
            return None  # a refusal is an answer too; its cost is what is measured

    return run


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_entry_point_check_is_linear(assert_linear: Any, language: str, text: str) -> None:
    defines = get_language(language).defines
    assert_linear(lambda code: defines(code, "f"), HOSTILE_TEXTS[text], 2000)


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
@pytest.mark.parametrize("parse", [parse_cpp, parse_java], ids=["cpp", "java"])
def test_the_declaration_parsers_are_linear(assert_linear: Any, parse: Any, text: str) -> None:
    assert_linear(quietly(lambda code: parse(code, "f", False)), HOSTILE_TEXTS[text], 1000)


def test_declarations_are_still_found_after_hostile_text() -> None:
    noise = "int f(" * 500 + ";\n" + " \n" * 500
    assert get_language("cpp").defines(noise + "int f(int x) {\n  return x;\n}\n", "f")
    assert get_language("java").defines("class A {\n" + noise + "  public static int f(int x) {", "f")
    assert not get_language("cpp").defines(noise + "int g(int x) { return f(x); }", "f")
    found = parse_cpp(noise + "long f(int x) {\n  return x;\n}\n", "f", False)
    assert found is not None and found.returns == "long" and [p.name for p in found.params] == ["x"]
