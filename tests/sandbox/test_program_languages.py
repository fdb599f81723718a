"""Test programs in C++ and Java (HumanEval-X format): the test is compiled against a typed
proxy of the entry point, each call crosses to the candidate's sandbox as data, and the
verdict says which line failed, or that the dataset's test does not compile."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import CodeCorrectnessEvaluator
from assay.sandbox import ProgramRun, SandboxPool, get_language
from assay.schemas import Example, Run

from ._languages import BROKEN, BROKEN_MESSAGE
from ._program_problems import PROBLEMS, Problem

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
SLOW = pytest.mark.slow
QUICK = {"vector_of_float", "helper_in_prompt"}  # the other signatures run in the slow tier
CASES = [
    pytest.param(
        language, problem, id=f"{language}-{problem.name}", marks=[] if problem.name in QUICK else [SLOW]
    )
    for language, problems in PROBLEMS.items()
    for problem in problems
]


def run(
    pool: SandboxPool, language: str, problem: Problem, completion: str, prompt: bool = True
) -> ProgramRun:
    return pool.run_test_program(
        get_language(language),
        problem.prompt + completion,
        problem.test,
        problem.entry,
        timeout=20,
        prompt=problem.prompt if prompt else "",
    )


@pytest.mark.parametrize(("language", "problem"), CASES)
def test_right_passes_and_wrong_fails(make_pool: Any, language: str, problem: Problem) -> None:
    pool: SandboxPool = make_pool("bubblewrap")
    right = run(pool, language, problem, problem.right)
    assert right.passed, right.verdict
    assert right.verdict["calls"] >= 1 and right.compile_ms is not None
    wrong = run(pool, language, problem, problem.wrong)
    assert not wrong.passed
    assert (wrong.verdict["stage"], wrong.verdict["kind"]) == ("test", "assertion"), wrong.verdict
    assert isinstance(wrong.verdict.get("line"), int), wrong.verdict
    source_line = problem.test.splitlines()[wrong.verdict["line"] - 1]
    assert wrong.verdict["source"].split("(")[0].strip() in source_line


@pytest.mark.parametrize("language", ["cpp", "java"])
def test_the_declaration_can_come_from_the_candidates_program(make_pool: Any, language: str) -> None:
    """No prompt: the header is read from the candidate's code (a strict grammar)."""
    problem = PROBLEMS[language][1]
    pool: SandboxPool = make_pool("bubblewrap")
    assert run(pool, language, problem, problem.right, prompt=False).passed
    wrong = run(pool, language, problem, problem.wrong, prompt=False)
    assert wrong.verdict["kind"] == "assertion", wrong.verdict


VOID = {
    "cpp": (
        '#include <stdexcept>\nvoid check_positive(int x) {\n    if (x < 0) throw std::invalid_argument("negative");\n}\n',
        "check_positive",
        "#undef NDEBUG\n#include<assert.h>\nint main(){\n    check_positive(3);\n    check_positive(X);\n}\n",
    ),
    "java": (
        "class Solution {\n    public void checkPositive(int x) {\n"
        '        if (x < 0) throw new IllegalArgumentException("negative");\n    }\n}\n',
        "checkPositive",
        "public class Main {\n    public static void main(String[] args) {\n"
        "        new Solution().checkPositive(3);\n        new Solution().checkPositive(X);\n    }\n}\n",
    ),
}


@pytest.mark.parametrize("language", ["cpp", "java"])
def test_a_void_function_and_a_candidate_exception(make_pool: Any, language: str) -> None:
    program, entry, test = VOID[language]
    pool: SandboxPool = make_pool("bubblewrap")
    assert pool.run_test_program(get_language(language), program, test.replace("X", "4"), entry, 20).passed
    raised = pool.run_test_program(get_language(language), program, test.replace("X", "-1"), entry, 20)
    assert not raised.passed
    assert raised.verdict["kind"] == "candidate_error", raised.verdict
    assert raised.verdict["error_type"] in ("std::invalid_argument", "IllegalArgumentException")
    assert "negative" in raised.verdict["message"]


BROKEN_TEST = {
    "cpp": "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (has_close_elements(1, 2, 3));\n}\n",
    "java": "public class Main {\n    public static void main(String[] args) {\n"
    "        new Solution().hasCloseElements(1, 2, 3);\n    }\n}\n",
}


@pytest.mark.parametrize("language", ["cpp", "java"])
def test_a_test_program_that_does_not_compile_is_told_apart(make_pool: Any, language: str) -> None:
    """The dataset's fault, not the candidate's: its own kind, with the compiler's lines."""
    problem = PROBLEMS[language][0]
    broken = Problem(problem.name, problem.entry, problem.prompt, problem.right, "", BROKEN_TEST[language])
    result = run(make_pool("bubblewrap"), language, broken, broken.right)
    assert not result.passed
    assert result.verdict["kind"] == "test_compile", result.verdict
    assert result.verdict["declaration_source"] == "prompt"
    assert "the test program does not compile" in result.verdict["message"]
    assert ("test.cpp:4" if language == "cpp" else "Main.java") in result.verdict["message"]


def test_the_evaluator_scores_cpp_and_java_test_programs() -> None:
    evaluator = CodeCorrectnessEvaluator(execution_timeout=20)
    for language in ("cpp", "java"):
        problem = PROBLEMS[language][0]
        inputs = {
            "prompt": problem.prompt,
            "test": problem.test,
            "entry_point": problem.entry,
            "language": language,
        }
        for completion, score in ((problem.right, 1.0), (problem.wrong, 0.0)):
            result = evaluator.evaluate(Run(outputs={"text": completion}), Example(inputs=inputs))
            assert isinstance(result, EvaluationResult)
            assert (result.score, result.metadata["mode"]) == (score, "test_program"), result.comment
        assert result.feedback == "A test assertion failed."
        assert result.comment.startswith("Failing assertion (test line "), result.comment


PICK_TESTS = {
    "cpp": "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (pick(1) == 1);\n}\n",
    "java": "import java.util.function.IntUnaryOperator;\n\npublic class Main {\n"
    "    public static void main(String[] args) {\n        IntUnaryOperator f = new Solution()::pick;\n"
    "        if (f.applyAsInt(1) != 1) throw new AssertionError();\n    }\n}\n",
}


@pytest.mark.parametrize("language", ["cpp", "java"])
def test_a_candidate_that_does_not_compile_fails_at_load(make_pool: Any, language: str) -> None:
    """The candidate's compile error, not the test's (the Java test's own import is moved
    to the top of the checker's file, and its lines stay true)."""
    run = make_pool("bubblewrap").run_test_program(
        get_language(language), BROKEN[language], PICK_TESTS[language], "pick", 20
    )
    assert not run.passed
    assert (run.verdict["stage"], run.verdict["kind"]) == ("load", "compile"), run.verdict
    assert BROKEN_MESSAGE[language] in run.verdict["message"]
    fixed = BROKEN[language].replace("undefinedName", "x")
    assert (
        make_pool("bubblewrap")
        .run_test_program(get_language(language), fixed, PICK_TESTS[language], "pick", 20)
        .passed
    )


@pytest.mark.parametrize(
    "backend", ["bubblewrap", pytest.param("unshare", marks=SLOW), pytest.param("rlimit", marks=SLOW)]
)
def test_a_right_answer_passes_on_every_backend(make_pool: Any, backend: str) -> None:
    pool: SandboxPool = make_pool(backend)
    for language in ("cpp", "java"):
        problem = PROBLEMS[language][0]
        result = run(pool, language, problem, problem.right)
        assert result.passed, (backend, language, result.verdict)
    assert pool.stray_processes() == []
