"""Go, Java, C++ and TypeScript: values cross with their types, failures are told apart
(raised at run time, does not compile), compile time is reported apart from running."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import CodeCorrectnessEvaluator
from assay.sandbox import Call, SandboxPool, UnsupportedModeError, get_language
from assay.sandbox import _toolchains as toolchains
from assay.schemas import Example, Run

from ._languages import BROKEN, BROKEN_MESSAGE, COMPILED, ECHO, ECHO_ENTRY, RAISED_TYPE, RAISES, RAISES_ENTRY

TEXT = 'héllo ✓ "quoted" \\ \n'
COMMON = [1.5, TEXT, True, [1, 2], {"a": [0.5, 1.0]}, {3, 4}]
BACK = [3.0, TEXT + "!", False, [1, 2, 2], {"a": [0.5, 1.0]}, {3, 4}]
ECHO_CALLS: dict[str, tuple[list[Any], list[Any]]] = {
    "go": (
        [2**60, 2**70, *COMMON, {"x": 1, "label": "p"}, None],
        [2**60 + 1, 2**71, *BACK, {"x": 1, "label": "p"}, None, []],
    ),
    "java": (
        [2**60, 2**70, *COMMON, {"x": 1, "label": "p"}, None, [5, 6]],
        [2**60 + 1, 2**71, *BACK, {"x": 1, "label": "p"}, None, [5, 6]],
    ),
    "cpp": (
        [2**60, 2**62, *COMMON, (1, "p"), None, []],
        [2**60 + 1, 2**63, *BACK, (1, "p"), None, []],
    ),
    "typescript": (
        [41, 2**70, *COMMON, {"x": 1, "label": "p"}, None],
        # a JavaScript number with no fraction is an integer, as in JavaScript
        [42, 2**71, 3, *BACK[1:4], {"a": [0.5, 1]}, {3, 4}, {"x": 1, "label": "p"}, None, []],
    ),
}


def same(expected: Any, actual: Any) -> bool:
    """Equal with the same types all the way down (a list and a tuple are one kind)."""
    sequence = (list, tuple)
    if isinstance(expected, sequence) and isinstance(actual, sequence):
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual))
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, dict):
        return expected.keys() == actual.keys() and all(same(v, actual[k]) for k, v in expected.items())
    return bool(expected == actual)


@pytest.mark.parametrize("name", COMPILED)
def test_values_cross_with_their_types(make_pool: Any, name: str) -> None:
    args, expected = ECHO_CALLS[name]
    run = make_pool("bubblewrap").run_function(
        get_language(name), ECHO[name], ECHO_ENTRY[name], [Call(tuple(args))], timeout=10
    )
    assert run.load_failure is None, run.load_failure
    outcome = run.outcomes[0]
    assert outcome.ok, (outcome.error_type, outcome.message, run.output)
    assert same(expected, outcome.value), outcome.value
    assert run.compile_ms is not None and run.compile_ms > 0


@pytest.mark.parametrize("name", COMPILED)
def test_run_time_errors_and_bad_arguments_fail_that_call_only(make_pool: Any, name: str) -> None:
    calls = [Call(([1, 2], 1)), Call(([1, 2], 5)), Call(("not a list", 0)), Call(([7], 0))]
    run = make_pool("bubblewrap").run_function(
        get_language(name), RAISES[name], RAISES_ENTRY[name], calls, timeout=10
    )
    statuses = [o.status for o in run.outcomes]
    # JavaScript does not check argument types: "not a list"[0] is "n"
    bad_argument = "ok" if name == "typescript" else "error"
    assert statuses == ["ok", "error", bad_argument, "ok"], [(o.status, o.message) for o in run.outcomes]
    assert [run.outcomes[0].value, run.outcomes[3].value] == [2, 7]
    assert run.outcomes[1].error_type == RAISED_TYPE[name]
    if name != "typescript":
        assert run.outcomes[2].error_type == "TypeError"


@pytest.mark.parametrize("name", COMPILED)
def test_a_compile_error_is_a_load_failure_with_the_compilers_first_lines(make_pool: Any, name: str) -> None:
    run = make_pool("bubblewrap").run_function(get_language(name), BROKEN[name], "pick", [Call((1,))], 10)
    assert run.load_failure is not None
    assert run.load_failure.kind == "compile"
    assert BROKEN_MESSAGE[name] in run.load_failure.message
    assert len(run.load_failure.message.splitlines()) <= 21
    assert [o.status for o in run.outcomes] == ["not_run"]


def test_the_evaluator_reports_compile_errors_and_compile_time() -> None:
    evaluator = CodeCorrectnessEvaluator(language="go", func_name="Square", execution_timeout=10)
    cases = [{"input": 3, "expected_output": 9}, {"input": -2, "expected_output": 4}]

    def score(code: str) -> EvaluationResult:
        example = Example(inputs={"question": "q", "test_cases": cases})
        result = evaluator.evaluate(Run(outputs={"text": code}), example)
        assert isinstance(result, EvaluationResult)
        return result

    good = score("```go\npackage main\n\nfunc Square(n int) int { return n * n }\n```")
    assert good.score == 1.0
    assert good.metadata["compile_ms"] > 0
    bad = score("package main\n\nfunc Square(n int) int { return n * }\n")
    assert bad.score == 0.0
    assert bad.feedback == "The code does not compile."
    assert "solution.go:3" in (bad.comment or "")


def test_a_missing_toolchain_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchains, "tool", lambda name: None)
    runtime: Any = None
    assert "apt-get install golang-go" in (get_language("go").runtime_missing(runtime) or "")
    assert "apt-get install default-jdk-headless" in (get_language("java").runtime_missing(runtime) or "")
    assert "apt-get install g++" in (get_language("c++").runtime_missing(runtime) or "")
    monkeypatch.setattr(toolchains, "typescript_module", lambda: None)
    node_only: Any = type("R", (), {"node": "/usr/bin/node"})()
    assert "npm install -g typescript" in (get_language("ts").runtime_missing(node_only) or "")


def test_test_programs_are_refused_where_the_language_has_none(make_pool: Any) -> None:
    without = dataclasses.replace(get_language("go"), test_programs=False)  # every shipped one has them
    with pytest.raises(UnsupportedModeError, match="go runs test cases"):
        make_pool("bubblewrap").run_test_program(without, "package main", "", "F", 5)


def test_typescript_test_programs_run_against_a_compiled_candidate(make_pool: Any) -> None:
    pool: SandboxPool = make_pool("bubblewrap")
    ts = get_language("typescript")
    program = "function add(a: number, b: number): number { return a + b; }\n"
    test = (
        "function check(candidate: (a: number, b: number) => number): void {\n"
        "  if (candidate(2, 3) !== 5) throw new Error('wrong');\n}\n"
    )
    assert pool.run_test_program(ts, program, test, "add", 10).passed
    wrong = pool.run_test_program(ts, program.replace("a + b", "a - b"), test, "add", 10)
    assert not wrong.passed and wrong.verdict["message"] == "wrong"


@pytest.mark.parametrize("name", COMPILED)
def test_plain_programs_compile_then_run(make_pool: Any, name: str) -> None:
    programs = {
        "go": 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() { fmt.Println("out"); os.Exit(3) }\n',
        "java": 'public class Main {\n  public static void main(String[] a) { System.out.println("out"); System.exit(3); }\n}\n',
        "cpp": '#include <cstdio>\nint main() { std::puts("out"); return 3; }\n',
        "typescript": 'const code: number = 3;\nconsole.log("out");\nprocess.exit(code);\n',
    }
    pool: SandboxPool = make_pool("bubblewrap")
    run = pool.run_script(get_language(name), programs[name], timeout=10)
    assert (run.exit_code, run.output.stdout, run.timed_out) == (3, "out\n", False)
    assert run.compile_ms is not None
    broken = pool.run_script(get_language(name), BROKEN[name], timeout=10)
    assert broken.exit_code == 1 and broken.output.stderr.startswith("compile error:")


def test_a_cpp_entry_point_named_like_a_std_function_is_the_candidates(make_pool: Any) -> None:
    """HumanEval-X names such as ``unique`` are overloaded by ``using namespace std``."""
    code = (
        "#include <bits/stdc++.h>\nusing namespace std;\n"
        'vector<int>\nunique(vector<int> l, const string& tag = "x") {\n'
        "    set<int> s(l.begin(), l.end());\n    return vector<int>(s.begin(), s.end());\n}\n"
    )
    run = make_pool("bubblewrap").run_function(
        get_language("cpp"), code, "unique", [Call(([3, 1, 3], "t"))], 10
    )
    assert run.load_failure is None, run.load_failure
    assert run.outcomes[0].value == [1, 3]
