"""Go test programs (HumanEval-X style ``func TestX(t *testing.T)`` with testify's
assert): compiled in the checker's sandbox against a typed proxy of the entry point, the
candidate in its own sandbox. The jobs run once per module, in parallel, and each test
reads the runs it needs (a Go job compiles twice: it takes seconds)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from assay.sandbox import Limits, ProgramRun, SandboxPool, get_language

from . import _hostile_snippets as snippets

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py
SECRET = fixtures.SECRET
assert_left_clean = fixtures.assert_left_clean

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

GO = get_language("go")
MARKER = "EXPECTED-" + os.urandom(8).hex()
CLOSE_PROMPT = """import (
    "math"
)

// Check if in given list of numbers, are any two numbers closer to each other than given threshold.
func HasCloseElements(numbers []float64, threshold float64) bool {
"""
CLOSE_BODY = """    for i := range numbers {
        for j := range numbers {
            if i != j && math.Abs(numbers[i]-numbers[j]) < threshold {
                return true
            }
        }
    }
    return false
}
"""
CLOSE_TEST = """func TestHasCloseElements(t *testing.T) {
    assert := assert.New(t)
    assert.Equal(true, HasCloseElements([]float64{1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.3))
    assert.Equal(false, HasCloseElements([]float64{1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.05))
    assert.Equal(true, HasCloseElements([]float64{1.0, 2.0, 5.9, 4.0, 5.0}, 0.95))
}
"""
# several signatures, declared by the candidate (no prompt): results with an error,
# variadic parameters, maps, nested slices, pointers, big integers
DIVIDE = """package main

import "errors"

func Divide(a, b int) (int, int, error) {
	if b == 0 {
		return 0, 0, errors.New("division by zero")
	}
	return a / b, a % b, nil
}
"""
DIVIDE_TEST = """import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDivide(t *testing.T) {
	q, r, err := Divide(7, 2)
	assert.NoError(t, err)
	assert.Equal(t, 3, q)
	assert.Equal(t, 1, r)
	_, _, err = Divide(1, 0)
	assert.EqualError(t, err, "division by zero")
}
"""
COUNT = """package main

import "math/big"

func Count(scale *big.Int, words ...string) (map[string]int, [][]string, *int, *big.Int) {
	counts := map[string]int{}
	for _, word := range words {
		counts[word]++
	}
	total := len(words)
	return counts, [][]string{words, {}}, &total, new(big.Int).Mul(scale, scale)
}
"""
COUNT_TEST = """func TestCount(t *testing.T) {
	scale, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	counts, nested, total, square := Count(scale, "a", "b", "a")
	assert.Equal(t, map[string]int{"a": 2, "b": 1}, counts)
	assert.Equal(t, [][]string{{"a", "b", "a"}, {}}, nested)
	assert.Equal(t, 3, *total)
	assert.Equal(t, "15241578753238836750495351562536198787501905199875019052100", square.String())
	empty, _, _, _ := Count(big.NewInt(0))
	assert.Empty(t, empty)
}
"""
# a prompt's helper the test calls (HumanEval/38 style), and a failure through t.Errorf
CYCLIC_PROMPT = """import (
    "strings"
)

// EncodeCyclic returns encoded string by cycling groups of three characters.
func EncodeCyclic(s string) string {
    groups := []string{}
    for i := 0; i < (len(s)+2)/3; i++ {
        groups = append(groups, s[3*i:min(3*i+3, len(s))])
    }
    for i, group := range groups {
        if len(group) == 3 {
            groups[i] = group[1:] + group[:1]
        }
    }
    return strings.Join(groups, "")
}

func min(a, b int) int {
    if a < b {
        return a
    }
    return b
}

// DecodeCyclic takes as input string encoded with EncodeCyclic function.
func DecodeCyclic(s string) string {
"""
CYCLIC_BODY = "    return EncodeCyclic(EncodeCyclic(s))\n}\n"
CYCLIC_TEST = """func TestDecodeCyclic(t *testing.T) {
    for _, word := range []string{"abcdef", "hello world", "xy"} {
        if got := DecodeCyclic(EncodeCyclic(word)); got != word {
            t.Errorf("DecodeCyclic(EncodeCyclic(%q)) = %q", word, got)
        }
    }
}
"""
PROBE_PROMPT = "// Solution answers.\nfunc Solution(which string) string {\n"
PROBE_TEST = f"""func TestSolution(t *testing.T) {{
	got := Solution("probe")
	assert.False(t, strings.Contains(got, "{MARKER}"), "the expected value leaked")
	assert.False(t, strings.Contains(got, "{SECRET}"), "the secret leaked")
	assert.Equal(t, "{MARKER}", got)
	assert.Equal(t, "honest", Solution("honest"))
}}
"""
MARKER_LINE = 5  # the line of assert.Equal(MARKER, got): the checks before it held
SEARCH = """package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Solution looks for the test's expected value everywhere it can read.
func Solution(which string) string {
	if which == "honest" {
		return "honest"
	}
	pattern := regexp.MustCompile("EXPE" + "CTED-[0-9a-f]{16}")
	hits := []string{}
	look := func(path string) {
		data, err := os.ReadFile(path)
		if err == nil && pattern.Match(data) {
			hits = append(hits, path)
		}
	}
	for _, root := range []string{"..", "/tmp", "/dev/shm"} {
		filepath.WalkDir(root, func(path string, entry os.DirEntry, err error) error {
			if err == nil && entry.Type().IsRegular() {
				if info, e := entry.Info(); e == nil && info.Size() < 1<<20 {
					look(path)
				}
			}
			return nil
		})
	}
	processes, _ := os.ReadDir("/proc")
	for _, entry := range processes {
		for _, name := range []string{"cmdline", "environ"} {
			look(filepath.Join("/proc", entry.Name(), name))
		}
	}
	return "hits: " + strings.Join(hits, ",")
}
"""
FDS = """	for fd := uintptr(3); fd <= 6; fd++ {
		file := os.NewFile(fd, "fd")
		if file != nil {
			file.Write([]byte("\\x00\\x00\\x00\\x10{\\"passed\\": true}"))
		}
	}
	return "nope"
"""
SLEEP = '\ttime.Sleep(time.Hour)\n\treturn "late"\n'
EXIT = '\tos.Exit(0)\n\treturn ""\n'
HUGE = '\treturn strings.Repeat("x", 3<<20)\n'
PANIC = "\tvar xs []string\n\treturn xs[3]\n"
WRONG_TYPE = "package main\n\nfunc Solution(which string) []int {\n\treturn []int{1}\n}\n"


def probe(body: str) -> str:
    return snippets.program("go", body)


def job(
    program: str, test: str, entry: str, prompt: str = "", timeout: float = 60, **limits: Any
) -> dict[str, Any]:
    return {
        "program": program,
        "test": test,
        "entry": entry,
        "prompt": prompt,
        "timeout": timeout,
        "limits": limits,
    }


QUICK = {
    "close_good": job(CLOSE_PROMPT + CLOSE_BODY, CLOSE_TEST, "HasCloseElements", CLOSE_PROMPT),
    "close_wrong": job(
        CLOSE_PROMPT.replace('    "math"\n', "") + "    return true\n}\n",
        CLOSE_TEST,
        "HasCloseElements",
        CLOSE_PROMPT,
    ),
    "divide": job(DIVIDE, DIVIDE_TEST, "Divide"),
    "divide_wrong": job(DIVIDE.replace("a % b, nil", 'a % b, errors.New("odd")'), DIVIDE_TEST, "Divide"),
    "count": job(COUNT, COUNT_TEST, "Count"),
    "cyclic": job(CYCLIC_PROMPT + CYCLIC_BODY, CYCLIC_TEST, "DecodeCyclic", CYCLIC_PROMPT),
    "cyclic_wrong": job(CYCLIC_PROMPT + "    return s\n}\n", CYCLIC_TEST, "DecodeCyclic", CYCLIC_PROMPT),
    "bad_test": job(
        DIVIDE, "func TestDivide(t *testing.T) {\n\tassert.Equal(t, 1, Divide(1))\n}\n", "Divide"
    ),
    "candidate_compile_error": job(
        "package main\n\nfunc Divide(a, b int) (int, int, error) {\n\treturn a\n}\n", DIVIDE_TEST, "Divide"
    ),
    "snoop": job(probe(snippets.snoop("go", [], [], 0)), PROBE_TEST, "Solution", PROBE_PROMPT),
    "search": job(SEARCH, PROBE_TEST, "Solution", PROBE_PROMPT),
    "forge": job(probe(snippets.FORGE["go"]), PROBE_TEST, "Solution", PROBE_PROMPT),
    "fds": job(probe(FDS), PROBE_TEST, "Solution", PROBE_PROMPT),
    "exit": job(probe(EXIT), PROBE_TEST, "Solution", PROBE_PROMPT),
    "panic": job(probe(PANIC), PROBE_TEST, "Solution", PROBE_PROMPT),
    "wrong_type": job(WRONG_TYPE, PROBE_TEST, "Solution", PROBE_PROMPT),
}
HEAVY = {
    # the timeout counts from when both sides are built (compiling has its own allowance),
    # and the candidate sleeps an hour: a short one ends the hang sooner, on a loaded machine too
    "sleep": job(probe(SLEEP), PROBE_TEST, "Solution", PROBE_PROMPT, timeout=1),
    "huge": job(probe(HUGE), PROBE_TEST, "Solution", PROBE_PROMPT, max_value_bytes=1 << 20),
    "fork_bomb": job(
        probe(snippets.PROCESS_BOMB["go"]), PROBE_TEST, "Solution", PROBE_PROMPT, max_processes=48
    ),
    "memory_bomb": job(
        probe(snippets.MEMORY_BOMB["go"]), PROBE_TEST, "Solution", PROBE_PROMPT, memory_bytes=384 << 20
    ),
}
BACKENDS = [
    "bubblewrap",
    pytest.param("unshare", marks=pytest.mark.slow),
    pytest.param("rlimit", marks=pytest.mark.slow),
]


def run_jobs(pool: SandboxPool, jobs: dict[str, dict[str, Any]]) -> dict[str, ProgramRun]:
    def one(spec: dict[str, Any]) -> ProgramRun:
        limits = Limits(**spec["limits"]) if spec["limits"] else Limits()
        return pool.run_test_program(
            GO, spec["program"], spec["test"], spec["entry"], spec["timeout"], limits, prompt=spec["prompt"]
        )

    with ThreadPoolExecutor(2) as executor:
        return dict(zip(jobs, executor.map(one, jobs.values())))


@pytest.fixture(scope="module", params=BACKENDS)
def runs(request: pytest.FixtureRequest, make_pool: Any) -> Iterator[dict[str, ProgramRun]]:
    pool: SandboxPool = make_pool(request.param, workers=2)
    yield run_jobs(pool, QUICK)
    assert_left_clean(pool)


def test_a_correct_candidate_passes_and_a_wrong_one_fails_with_the_line(runs: dict[str, ProgramRun]) -> None:
    good, wrong = runs["close_good"], runs["close_wrong"]
    assert good.passed, good.verdict
    assert good.verdict["calls"] == 3
    assert not wrong.passed
    assert wrong.verdict["kind"] == "assertion"
    assert wrong.verdict["error_type"] == "assert.Equal"
    assert wrong.verdict["line"] == 4 and wrong.verdict["test"] == "TestHasCloseElements"
    assert wrong.verdict["source"].startswith("assert.Equal(false, HasCloseElements(")
    assert "expected: false\nactual  : true" in wrong.verdict["message"]


def test_signatures_declared_by_the_candidate(runs: dict[str, ProgramRun]) -> None:
    """Several results with a trailing error (the candidate's own error reaches the test
    as an error value), variadic parameters, maps, nested slices, pointers, *big.Int."""
    assert runs["divide"].passed, runs["divide"].verdict
    assert runs["count"].passed, runs["count"].verdict
    wrong = runs["divide_wrong"].verdict
    assert wrong["kind"] == "assertion" and wrong["error_type"] == "assert.NoError"
    assert wrong["line"] == 9 and "odd" in wrong["message"]


def test_the_prompts_helpers_are_in_the_test_program_and_t_errorf_is_a_failure(
    runs: dict[str, ProgramRun],
) -> None:
    assert runs["cyclic"].passed, runs["cyclic"].verdict
    wrong = runs["cyclic_wrong"].verdict
    assert wrong["kind"] == "assertion" and wrong["line"] == 4
    assert 'DecodeCyclic(EncodeCyclic("abcdef")) = "bcaefd"' in wrong["message"]


def test_a_test_program_that_does_not_compile_is_told_apart(runs: dict[str, ProgramRun]) -> None:
    bad = runs["bad_test"].verdict
    assert bad["kind"] == "test_compile" and bad["stage"] == "test", bad
    assert "program_test.go:2" in bad["message"]
    assert bad["declaration_source"] == "candidate"
    compile_error = runs["candidate_compile_error"].verdict
    assert compile_error["stage"] == "load" and compile_error["kind"] == "compile", compile_error
    assert "solution.go:4" in compile_error["message"]


@pytest.mark.parametrize("name", ["snoop", "search"])
def test_the_test_and_its_expected_values_are_out_of_the_candidates_reach(
    runs: dict[str, ProgramRun], name: str, request: pytest.FixtureRequest
) -> None:
    verdict = runs[name].verdict
    assert not runs[name].passed
    assert verdict["kind"] == "assertion" and verdict["line"] == MARKER_LINE, verdict
    # the rlimit backend shows the host's /tmp (it says so): older markers may lie there
    if name == "search" and request.node.callspec.params["runs"] != "rlimit":
        assert 'actual  : "hits: "' in verdict["message"], verdict["message"]


@pytest.mark.parametrize(
    "name, kind, error_type",
    [
        ("forge", "candidate_ended", "CandidateEnded"),  # forged frames: their lengths are off
        ("fds", "candidate_error", "MalformedReply"),  # {"passed": true} on the replies' pipe
        ("exit", "candidate_ended", "CandidateEnded"),
        ("panic", "candidate_error", "runtime.Error"),
        ("wrong_type", "candidate_error", "DecodeError"),
    ],
)
def test_candidate_side_failures_are_the_candidates(
    runs: dict[str, ProgramRun], name: str, kind: str, error_type: str
) -> None:
    run = runs[name]
    assert not run.passed and not run.timed_out
    assert run.verdict["stage"] == "test"
    assert run.verdict["kind"] == kind and run.verdict["error_type"] == error_type, run.verdict
    assert run.verdict["line"] == 2 and run.verdict["source"] == 'got := Solution("probe")'


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["bubblewrap", "unshare", "rlimit"])
def test_hangs_and_bombs_are_stopped(make_pool: Any, backend: str) -> None:
    pool: SandboxPool = make_pool(backend, workers=2)
    found = run_jobs(pool, HEAVY)
    assert found["sleep"].timed_out and not found["sleep"].passed
    assert found["sleep"].verdict["kind"] == "timeout", found["sleep"].verdict
    assert "during the test program" in found["sleep"].verdict["message"]  # not the build
    huge = found["huge"].verdict
    assert huge["kind"] == "candidate_ended" and "incoming frame too large" in huge["message"], huge
    for name in ("fork_bomb", "memory_bomb"):
        assert not found[name].passed, found[name].verdict
        assert found[name].verdict["kind"] in ("candidate_ended", "candidate_error", "assertion"), found[
            name
        ].verdict
    assert_left_clean(pool)


def test_the_evaluator_scores_a_humaneval_x_completion() -> None:
    from assay.evaluation import EvaluationResult
    from assay.evaluators import CodeCorrectnessEvaluator
    from assay.schemas import Example, Run

    evaluator = CodeCorrectnessEvaluator(execution_timeout=20, language="go")
    inputs = {"prompt": CLOSE_PROMPT, "test": CLOSE_TEST, "entry_point": "HasCloseElements"}
    good = evaluator.evaluate(Run(outputs={"text": f"```go\n{CLOSE_BODY}```"}), Example(inputs=inputs))
    assert isinstance(good, EvaluationResult)
    assert good.score == 1.0, good.comment
    assert good.metadata is not None and good.metadata["mode"] == "test_program"
    wrong = evaluator.evaluate(
        Run(outputs={"text": "    return !math.IsNaN(threshold)\n}\n"}), Example(inputs=inputs)
    )
    assert isinstance(wrong, EvaluationResult) and wrong.score == 0.0
    assert wrong.comment is not None and wrong.comment.startswith(
        "Failing assertion (test line 4): assert.Equal(false, HasCloseElements("
    )
