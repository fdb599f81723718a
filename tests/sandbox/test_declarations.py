"""The entry point's declaration for a compiled checker: taken from the prompt (trusted)
when it declares the function, else from the candidate's header, where only plain types
are accepted and the proxy is rebuilt from the tokens, never copied."""

from __future__ import annotations

import pytest

from assay.sandbox._declarations import DeclarationRefused, Param, checker_declaration
from assay.sandbox.harness import proxies

from ._program_problems import PROBLEMS


@pytest.mark.parametrize("language", ["cpp", "java"])
def test_every_humaneval_x_prompt_declares_its_entry_point(language: str) -> None:
    for problem in PROBLEMS[language]:
        found = checker_declaration(language, problem.prompt, problem.prompt + problem.right, problem.entry)
        assert found.source == "prompt" and found.name == problem.entry
        assert problem.prompt.startswith(found.prefix)  # the text before the header, as written


def test_a_cpp_header_over_several_lines_with_nested_templates() -> None:
    code = (
        "#include <map>\n// helper(int) is not it\nusing namespace std;\n\n"
        "static tuple<long long, map<string, vector<double>>>\n"
        "echo(const string& s, unsigned long long n, std::vector<std::pair<int, char>> xs) {\n  return {};\n}\n"
    )
    found = checker_declaration("cpp", "", code, "echo")
    assert found.source == "candidate" and found.prefix == ""
    assert found.returns == "tuple<long long, map<string, vector<double>>>"
    assert found.params == (
        Param("const string&", "s"),
        Param("unsigned long long", "n"),
        Param("std::vector<std::pair<int, char>>", "xs"),
    )


def test_a_java_method_keeps_its_modifiers_and_class() -> None:
    code = "class Sol {\n  /** f(x) */\n  public static Map<String, List<Integer>> f(final int[][] a, Optional<String> s) {\n"
    found = checker_declaration("java", "", code + "return null; } }", "f")
    assert (found.modifiers, found.owner, found.returns) == (
        ("public", "static"),
        "Sol",
        "Map<String, List<Integer>>",
    )
    assert found.params == (Param("int[][]", "a"), Param("Optional<String>", "s"))


def test_calls_and_comments_are_not_the_declaration() -> None:
    code = "/* int f(int x) { */\nint g() { return f(1); }\nint f(long y) {\n return 0; }\n"
    assert checker_declaration("cpp", "", code, "f").params == (Param("long", "y"),)


REFUSED = {
    "cpp": [
        'int f(int x = (system("id"), 1)) { return x; }',  # a default argument runs code
        "Evil f(int x) { return {}; }",  # a type of the candidate's
        "int f(int* x) { return *x; }",  # pointers: no codec
        "int f(vector<int>&& x) { return 0; }",
        "int f(std::function<int()> g) { return 0; }",
        "int f(int [[maybe_unused]] x) { return 0; }",
        "int f(int __assay) { return 0; }",  # a name that could shadow the harness
        "int f(int x, int x) { return 0; }",
        "vector f(int x) { return {}; }",
        "int f(vector<int x) { return 0; }",
    ],
    "java": [
        "class S { int f(@Evil int x) { return x; } }",
        "class S { Evil f(int x) { return null; } }",
        "class S { <T> T f(T x) { return x; } }",
        "class S { int f(int... xs) { return 0; } }",
        "class S { int f(java.io.File x) { return 0; } }",
        "class S { int f(List<? extends Evil> x) { return 0; } }",
        "class AssayChecker { public static int f(int x) { return 0; } }",  # the harness's class
    ],
}


@pytest.mark.parametrize(
    ("language", "code"), [(lang, code) for lang, codes in REFUSED.items() for code in codes]
)
def test_headers_beyond_plain_types_are_refused(language: str, code: str) -> None:
    with pytest.raises(DeclarationRefused, match=r"\bf\b"):
        checker_declaration(language, "", code, "f")


def test_an_unusual_prompt_falls_back_to_the_candidates_header() -> None:
    """A prompt that does not declare the function (or not in a form we read) is not an
    error as long as the candidate's own header is a plain one."""
    found = checker_declaration("cpp", "// write f\n", "int f(int x) { return x; }", "f")
    assert found.source == "candidate"
    with pytest.raises(DeclarationRefused, match="no declaration of 'g'"):
        checker_declaration("cpp", "// write g\n", "int f(int x) { return x; }", "g")


def test_the_proxy_source_holds_only_rebuilt_tokens() -> None:
    """From a candidate's header, the checker's source holds the type and parameter names
    and nothing else of the candidate's text."""
    code = "#define X 1\nstd::string  solution ( const std::string &  which )   // hi\n{ return which; }\n"
    found = checker_declaration("cpp", "", code, "solution")
    setup = {"declaration": found.frame(), "test": "int main() { return 0; }", "max_value_bytes": 10}
    source = proxies.cpp_source(setup, "/h/assay_checker.hpp")
    assert "const std::string& which" in source and "#define X" not in source and "// hi" not in source
    assert 'return assay::proxy<std::string>("solution", which);' in source
    assert "int main() { return 0; return 0; }" in source  # the renamed main returns


def test_a_setup_with_a_bad_name_is_refused_by_the_build_step() -> None:
    setup = {"declaration": {"name": "f; system", "returns": "int", "params": []}, "test": ""}
    with pytest.raises(proxies.BadSetup):
        proxies.cpp_source(setup, "/h.hpp")
