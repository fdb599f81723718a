"""The Go entry point's declaration, read in the trusted parent: only headers whose every
token fits the whitelist grammar are accepted, and the proxy the checker compiles is
written from the parsed types, so no text of the candidate's can reach that compiler."""

from __future__ import annotations

import pytest

from assay.sandbox._declarations import DeclarationRefused, checker_declaration
from assay.sandbox.harness import go_checker
from assay.sandbox.harness.proxies import BadSetup


def declared(program: str, entry: str = "F", prompt: str = "") -> dict[str, object]:
    return checker_declaration("go", prompt, program, entry).frame()


@pytest.mark.parametrize(
    "header, params, returns",
    [
        ("func F(numbers []float64, threshold float64) bool {", ["[]float64", "float64"], "bool"),
        ("func F(a, b int, words ...string) (int, error) {", ["int", "int", "...string"], "(int, error)"),
        ("func F(int, string) (q, r int, err error) {", ["int", "string"], "(int, int, error)"),
        (
            "func F(m map[string][]int, p *int, a [3]uint8, n *big.Int, s map[rune]struct{}, x interface{}) any {",
            ["map[string][]int", "*int", "[3]uint8", "*big.Int", "map[rune]struct{}", "interface{}"],
            "any",
        ),
        ("func F(\n\ta int,\n\tb string,\n) {", ["int", "string"], ""),
    ],
)
def test_headers_in_the_grammar_are_read_with_canonical_types(
    header: str, params: list[str], returns: str
) -> None:
    found = declared("package main\n\n" + header + "\n\treturn\n}\n")
    assert [kind for kind, _ in found["params"]] == params  # type: ignore[attr-defined]
    assert [name for _, name in found["params"]] == [f"p{i}" for i in range(len(params))]  # type: ignore[attr-defined]
    assert found["returns"] == returns
    assert found["source"] == "candidate" and found["prefix"] == ""


@pytest.mark.parametrize(
    "header, reason",
    [
        ("func F(p Point) int {", "'Point' is not one"),
        ("func F(Point, int) int {", "'Point' is not one"),
        ("func F(a int) (Point) {", "'Point' is not one"),
        ("func F(f func() int) int {", "'func' is not one"),
        ("func F(s struct{ X int }) int {", "is not"),
        ("func F[T any](a T) T {", "generic"),
        ("func F(a int /* ) int { */) int {", "is not part of a type"),
        ("func F(a [len(os.Args)]int) int {", "array length"),
        ("func F(a int) int; var _ = os.Exit {", "is not part of a type"),
        ("func F(a int) (int, error, int) {", "only as the last result"),
        ("func F(c chan int) int {", "'chan' is not one"),
    ],
)
def test_a_header_outside_the_grammar_is_refused(header: str, reason: str) -> None:
    with pytest.raises(DeclarationRefused, match="the declaration of F") as refused:
        declared("package main\n\n" + header + "\n\treturn 0\n}\n")
    assert reason in str(refused.value)


def test_the_body_is_never_read_and_no_candidate_text_reaches_the_proxy() -> None:
    program = (
        'package main\n\nimport "os"\n\n'
        "func F(evil_name_one []int, evil_name_two map[string]int) int { os.Exit(0); return 1 }\n"
        "func init() { os.Exit(0) }\n"
    )
    found = declared(program)
    proxy = go_checker.proxy_source(found)
    assert "evil" not in proxy and "os." not in proxy and "init" not in proxy
    assert proxy.startswith("package main\n\nfunc F(p0 []int, p1 map[string]int) int {")


def test_the_prompt_is_preferred_and_gives_its_helpers() -> None:
    prompt = 'import (\n    "math"\n)\n\nfunc helper() float64 { return math.Pi }\n\n// doc\nfunc F(x float64) float64 {\n'
    found = declared('package main\nfunc F(x int) string { return "" }\n', prompt=prompt)
    assert found["source"] == "prompt" and found["params"] == [["float64", "p0"]]
    assert found["prefix"] == prompt[: prompt.index("func F")]


def test_no_declaration_anywhere_is_refused() -> None:
    with pytest.raises(DeclarationRefused, match="no declaration of 'F'"):
        declared("package main\n\nfunc G() {}\n")


def setup(test: str, declaration: dict[str, object]) -> dict[str, object]:
    return {"test": test, "declaration": declaration, "entry_point": declaration["name"]}


def test_the_test_keeps_its_line_numbers_and_gets_the_imports_it_uses() -> None:
    test = "func TestF(t *testing.T) {\n\tassert.Equal(t, 3, F(math.MaxInt8))\n}\n"
    files = go_checker.sources(setup(test, declared("func F(x int) int {\n}\n")))
    compiled = files["program_test.go"].splitlines()
    assert len(compiled) == len(test.splitlines())
    assert compiled[0].startswith(
        'package main; import ("testing"; "github.com/stretchr/testify/assert"; "math"); '
    )
    assert "func assayTest_TestF(t *testing.T)" in compiled[0]
    assert (
        "func TestF(t *testing.T) {\n\tdefer assayRecover(t)\n\tassayTest_TestF(t)\n}"
        in files["assay_tests_test.go"]
    )
    assert files["program_test.txt"] == test


def test_a_test_file_with_its_own_package_and_imports_is_kept() -> None:
    test = 'package x\n\nimport (\n\t"testing"\n\t"github.com/stretchr/testify/assert"\n)\n\nfunc TestF(t *testing.T) { assert.True(t, F(1) > 0) }\n'
    compiled = go_checker.sources(setup(test, declared("func F(x int) int {\n}\n")))["program_test.go"]
    assert compiled.startswith("package main; \n\nimport (")
    assert len(compiled.splitlines()) == len(test.splitlines())


def test_the_prompt_helpers_keep_only_the_imports_they_use() -> None:
    prompt = 'import (\n    "math"\n    "strings"\n)\n\nfunc helper() float64 { return math.Pi }\n\nfunc F(x float64) float64 {\n'
    files = go_checker.sources(setup("func TestF(t *testing.T) {}\n", declared("", prompt=prompt)))
    helpers = files["assay_prompt.go"]
    assert helpers.startswith('package main; import ("math"); ')
    assert "strings" not in helpers and "func helper()" in helpers


def test_a_test_without_test_functions_is_a_bad_setup() -> None:
    with pytest.raises(BadSetup, match="defines no `func TestXxx"):
        go_checker.sources(setup("func check() {}\n", declared("func F() {\n}\n")))
