"""Code extraction: markdown fences and HumanEval program assembly."""

from __future__ import annotations

import pytest

from assay.sandbox import UnknownLanguageError, get_language, strip_fences


def test_fences_prefer_the_language_block() -> None:
    text = "Here:\n```text\nnot code\n```\nand\n```python\ndef f():\n    return 1\n```\n"
    assert strip_fences(text, get_language("python")) == "def f():\n    return 1\n"


def test_fences_fall_back_to_the_first_block_and_plain_text_is_kept() -> None:
    python = get_language("python")
    assert strip_fences("```\nx = 1\n```", python) == "x = 1\n"
    assert strip_fences("x = 1\n", python) == "x = 1\n"
    assert strip_fences("```py\nx = 1\n", python) == "x = 1\n"  # unclosed fence


def test_program_joins_prompt_and_completion_unless_complete() -> None:
    python = get_language("python")
    prompt = 'def add(a, b):\n    """Add."""\n'
    assert python.program(prompt, "    return a + b\n", "add") == prompt + "    return a + b\n"
    whole = "def add(a, b):\n    return a + b\n"
    assert python.program(prompt, whole, "add") == whole
    assert python.program(prompt, prompt + "    return 0\n", "add") == prompt + "    return 0\n"


def test_javascript_program_detection() -> None:
    js = get_language("js")
    assert js.name == "javascript"
    assert js.defines("const add = (a, b) => a + b;", "add")
    assert js.defines("function add(a, b) { return a + b }", "add")
    assert not js.defines("  return a + b;\n};", "add")


def test_unknown_language_names_the_known_ones() -> None:
    with pytest.raises(UnknownLanguageError, match="javascript, python"):
        get_language("cobol")


def test_compiled_language_program_detection() -> None:
    go, java, cpp, ts = (get_language(name) for name in ("golang", "java", "c++", "ts"))
    assert (go.name, cpp.name, ts.name) == ("go", "cpp", "typescript")
    assert go.defines("package main\n\nfunc Add(a, b int) int { return a + b }\n", "Add")
    assert not go.defines("\treturn Add(a, b)\n}\n", "Add")
    assert java.defines("class Solution {\n    public int add(int a, int b) {\n", "add")
    assert not java.defines("        return add(a, b);\n", "add")
    assert cpp.defines("vector<int> unique(vector<int> l) {\n", "unique")
    assert not cpp.defines("    return unique(l);\n", "unique")
    assert ts.defines("function add(a: number, b: number): number {", "add")
    assert ts.defines("const add = (a: number) => a;", "add")
    prompt = "package main\n\n// Add adds.\nfunc Add(a, b int) int {\n"
    assert go.program(prompt, "\treturn a + b\n}\n", "Add") == prompt + "\treturn a + b\n}\n"


def test_every_language_is_known_by_its_names() -> None:
    with pytest.raises(UnknownLanguageError, match="cpp, go, java, javascript, python, typescript"):
        get_language("cobol")
