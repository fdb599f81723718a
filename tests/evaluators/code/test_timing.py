"""Execution time measured inside the sandbox, timeouts calibrated on the reference, and
the relative-speed metric."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from tests.sandbox._languages import COMPILED, RAISED_TYPE, RAISES, RAISES_ENTRY

import assay
from assay.evaluation import EvaluationResult, EvaluationResults
from assay.evaluators.code import Calibrated, CodeCorrectnessEvaluator
from assay.evaluators.code._timing import relative_time_result
from assay.sandbox._jobs import reported_time
from assay.schemas import Example, Run
from assay.store import Store

FIB_ITERATIVE = (
    "def solution(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n"
)
# correct, and about a thousand times the reference's work
FIB_SLOWER = (
    "def solution(n):\n    for _ in range(1000):\n        a, b = 0, 1\n"
    "        for _ in range(n):\n            a, b = b, a + b\n    return a\n"
)
FIB_EXPONENTIAL = "def solution(n):\n    return n if n < 2 else solution(n - 1) + solution(n - 2)\n"
# fib(40) by naive recursion: ~10 s of CPU on a fast 2026 core, far past any limit below
# (fib(35) took 0.85 s on one, under a 1 s floor: the test meant to cut it passed it)
FIB_CASES = [{"input": 10, "expected_output": 55}, {"input": 40, "expected_output": 102334155}]
BUSY_LOOP = "def solution(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"

# the same busy loop in each language, as written for it (a sum that no optimiser folds)
SPIN = {
    "python": BUSY_LOOP,
    "javascript": "function solution(n) { let t = 0; for (let i = 0; i < n; i++) t += i; return t; }",
    "typescript": "function solution(n: number): number {\n  let t = 0;\n  for (let i = 0; i < n; i++) t = (t * 31 + i) % 1000003;\n  return t;\n}\n",
    "go": "package main\n\nfunc Solution(n int64) int64 {\n\tvar t int64\n\tfor i := int64(0); i < n; i++ {\n"
    "\t\tt = (t*31 + i) % 1000003\n\t}\n\treturn t\n}\n",
    "java": "class Solution {\n    static long solution(long n) {\n        long t = 0;\n"
    "        for (long i = 0; i < n; i++) t = (t * 31 + i) % 1000003;\n        return t;\n    }\n}\n",
    "cpp": "long long solution(long long n) {\n    long long t = 0;\n"
    "    for (long long i = 0; i < n; i++) t = (t * 31 + i) % 1000003;\n    return t;\n}\n",
}
ENTRY = {"go": "Solution"}  # the others: solution
FIB = {
    "go": (
        "package main\n\nfunc Fib(n int) int {\n\ta, b := 0, 1\n\tfor i := 0; i < n; i++ {\n"
        "\t\ta, b = b, a+b\n\t}\n\treturn a\n}\n",
        "package main\n\nfunc Fib(n int) int {\n\tif n < 2 {\n\t\treturn n\n\t}\n"
        "\treturn Fib(n-1) + Fib(n-2)\n}\n",
    ),
    "java": (
        "class Solution {\n    static long fib(int n) {\n        long a = 0, b = 1;\n"
        "        for (int i = 0; i < n; i++) { long c = a + b; a = b; b = c; }\n        return a;\n    }\n}\n",
        "class Solution {\n    static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n}\n",
    ),
    "cpp": (
        "long long fib(int n) {\n    long long a = 0, b = 1;\n"
        "    for (int i = 0; i < n; i++) { long long c = a + b; a = b; b = c; }\n    return a;\n}\n",
        "long long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n",
    ),
    "typescript": (
        "function fib(n: number): number {\n  let a = 0, b = 1;\n"
        "  for (let i = 0; i < n; i++) [a, b] = [b, a + b];\n  return a;\n}\n",
        "function fib(n: number): number {\n  return n < 2 ? n : fib(n - 1) + fib(n - 2);\n}\n",
    ),
}


def spun(n: int) -> int:
    """What SPIN computes in the compiled languages: t = (31 t + i) mod p for i < n.

    By powers of the step's matrix on (t, i, 1), so that 100 million steps take microseconds.
    """
    p = 1000003
    step = [[31, 1, 0], [0, 1, 1], [0, 0, 1]]
    power = [[int(r == c) for c in range(3)] for r in range(3)]
    while n:
        if n & 1:
            power = _times(power, step, p)
        step, n = _times(step, step, p), n >> 1
    return power[0][2]  # t starts at 0, i at 0: t_n = power (0, 0, 1)


def _times(a: list[list[int]], b: list[list[int]], p: int) -> list[list[int]]:
    return [[sum(a[r][k] * b[k][c] for k in range(3)) % p for c in range(3)] for r in range(3)]


def fib_example(reference: str = FIB_ITERATIVE, **outputs: Any) -> Example:
    return Example(inputs={"test_cases": FIB_CASES}, outputs={"reference_code": reference, **outputs})


def results_of(output: Any) -> list[EvaluationResult]:
    if isinstance(output, EvaluationResults):
        return list(output.results)
    assert isinstance(output, EvaluationResult)
    return [output]


@pytest.fixture
def busy_cpus() -> Iterator[None]:
    """Every core busy with a loop of ours (and then some), for the length of the test."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


# -- execution time ---------------------------------------------------------------------
@pytest.mark.parametrize("language", ["python", "javascript", *COMPILED])
def test_each_test_reports_cpu_and_wall_time_of_the_call_alone(language: str) -> None:
    # the big call takes hundreds of ms (Python's 3 million steps, the others' 100 million),
    # far past a first call's one-off cost (a JVM linking classes: 6.2 ms seen under CI load)
    big_n = 3_000_000 if language == "python" else 100_000_000
    big = big_n * (big_n - 1) // 2 if language in ("python", "javascript") else spun(big_n)
    small = 45 if language in ("python", "javascript") else spun(10)
    tiny_case = {"input": 10, "expected_output": small}
    cases = [tiny_case, {"input": big_n, "expected_output": big}, tiny_case]
    example = Example(
        inputs={"test_cases": cases, "language": language, "func_name": ENTRY.get(language, "solution")}
    )
    run = Run(outputs={"text": SPIN[language]})
    result = results_of(CodeCorrectnessEvaluator(execution_timeout=60).evaluate(run, example))[0]
    assert result.score == 1, result.comment
    first, big, tiny = result.metadata["test_cases_details"]
    for detail in (first, big, tiny):
        assert detail["cpu_ms"] is not None and detail["wall_ms"] is not None
        # measured inside: never more than the parent saw from sending the call to its reply
        assert detail["wall_ms"] <= detail["duration_ms"]
    assert big["cpu_ms"] > 20 * max(tiny["cpu_ms"], 0.001)  # a clock fine enough to tell them apart
    assert tiny["cpu_ms"] < 5  # not the process's start, nor loading (compiling) the code
    assert first["cpu_ms"] < big["cpu_ms"] / 5  # nor in the first call
    total = result.metadata["execution_time"]
    assert total["tests_timed"] == 3
    assert total["cpu_ms"] == pytest.approx(first["cpu_ms"] + big["cpu_ms"] + tiny["cpu_ms"], abs=0.01)


@pytest.mark.parametrize("language", COMPILED)
def test_a_call_that_raises_still_reports_its_time(language: str) -> None:
    cases = [{"args": [[1, 2], 5], "expected_output": 0}]
    example = Example(inputs={"test_cases": cases, "language": language, "func_name": RAISES_ENTRY[language]})
    result = results_of(
        CodeCorrectnessEvaluator().evaluate(Run(outputs={"text": RAISES[language]}), example)
    )[0]
    (detail,) = result.metadata["test_cases_details"]
    assert result.score == 0 and RAISED_TYPE[language] in str(detail), detail
    assert detail["cpu_ms"] is not None and 0 <= detail["wall_ms"] <= detail["duration_ms"]


@pytest.mark.parametrize(
    "language, code, test",
    [
        (
            "python",
            BUSY_LOOP,
            "def check(candidate):\n    assert candidate(10) == 45\n    assert candidate(200000) > 0\n",
        ),
        (
            "javascript",
            "function solution(n) { let t = 0; for (let i = 0; i < n; i++) t += i; return t; }",
            "function check(candidate) { if (candidate(10) !== 45) throw new Error('no'); candidate(200000); }",
        ),
    ],
)
def test_a_test_program_reports_the_candidate_time_over_its_calls(
    language: str, code: str, test: str
) -> None:
    example = Example(inputs={"prompt": "", "test": test, "entry_point": "solution", "language": language})
    result = results_of(CodeCorrectnessEvaluator().evaluate(Run(outputs={"text": code}), example))[0]
    assert result.score == 1, result.comment
    spent = result.metadata["execution_time"]
    assert spent["calls"] == 2 and spent["cpu_ms"] > 0 and spent["wall_ms"] >= spent["cpu_ms"] * 0.5


SMALL, BIG = spun(10), spun(3_000_000)
# HumanEval-X style: the prompt declares the function, the completion is its body
SPIN_PROGRAMS = {
    "go": (
        "func Spin(n int64) int64 {\n",
        "\tvar t int64\n\tfor i := int64(0); i < n; i++ {\n\t\tt = (t*31 + i) % 1000003\n\t}\n\treturn t\n}\n",
        "func TestSpin(t *testing.T) {\n    assert := assert.New(t)\n"
        f"    assert.Equal(int64({SMALL}), Spin(10))\n    assert.Equal(int64({BIG}), Spin(3000000))\n}}\n",
        "Spin",
    ),
    "cpp": (
        "long long spin(long long n){\n",
        "    long long t = 0;\n    for (long long i = 0; i < n; i++) t = (t * 31 + i) % 1000003;\n    return t;\n}\n",
        f"#undef NDEBUG\n#include<assert.h>\nint main(){{\n    assert (spin(10) == {SMALL});\n"
        f"    assert (spin(3000000) == {BIG});\n}}\n",
        "spin",
    ),
    "java": (
        "import java.util.*;\nclass Solution {\n    public long spin(long n) {\n",
        "        long t = 0;\n        for (long i = 0; i < n; i++) t = (t * 31 + i) % 1000003;\n"
        "        return t;\n    }\n}\n",
        "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
        f"        if (s.spin(10) != {SMALL}L) throw new AssertionError(1);\n"
        f"        if (s.spin(3000000) != {BIG}L) throw new AssertionError(2);\n    }}\n}}\n",
        "spin",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(SPIN_PROGRAMS))
def test_a_compiled_test_program_reports_the_candidate_time_over_its_calls(language: str) -> None:
    prompt, body, test, entry = SPIN_PROGRAMS[language]
    example = Example(inputs={"prompt": prompt, "test": test, "entry_point": entry, "language": language})
    evaluator = CodeCorrectnessEvaluator(execution_timeout=60)
    result = results_of(evaluator.evaluate(Run(outputs={"text": body}), example))[0]
    assert result.score == 1, result.comment
    spent = result.metadata["execution_time"]
    assert spent["calls"] == 2 and spent["cpu_ms"] > 1 and spent["wall_ms"] >= spent["cpu_ms"] * 0.5
    # the candidate's two calls, not its compile (seconds) nor the checker's own work
    assert spent["wall_ms"] < result.metadata["duration_ms"]


@pytest.mark.parametrize(
    "field, expected",
    [
        ({"wall_ms": 1.5, "cpu_ms": 1.0}, (1.5, 1.0)),
        ({"wall_ms": -1, "cpu_ms": float("nan")}, (None, None)),
        ({"wall_ms": True, "cpu_ms": "3"}, (None, None)),
        ({"wall_ms": 1e300}, (None, None)),
        ("fast", (None, None)),
        (None, (None, None)),
    ],
)
def test_a_reply_time_that_is_absurd_is_dropped_not_trusted(field: Any, expected: Any) -> None:
    assert reported_time(field) == expected


# -- calibrated timeouts ----------------------------------------------------------------
@pytest.mark.slow
def test_calibrated_a_slower_correct_answer_passes_under_load_an_exponential_one_times_out(
    memory_store: Store, busy_cpus: None
) -> None:
    evaluator = CodeCorrectnessEvaluator(time_limit=Calibrated(factor=4, floor=1.0), execution_timeout=60)
    slower = results_of(evaluator.evaluate(Run(outputs={"text": FIB_SLOWER}), fib_example()))[0]
    assert slower.score == 1, slower.comment
    assert slower.metadata["timeout_mode"] == {"mode": "calibrated", "factor": 4, "floor_s": 1.0}
    reference = slower.metadata["reference_time"]
    assert reference["repeats"] == 3 and len(reference["per_test_ms"]) == 2
    exponential = results_of(evaluator.evaluate(Run(outputs={"text": FIB_EXPONENTIAL}), fib_example()))[0]
    assert exponential.score == 0.5  # fib(10) passes; fib(40) is cut at its own limit
    statuses = [d["status"] for d in exponential.metadata["test_cases_details"]]
    assert statuses == ["ok", "timeout"]
    limit = 4 * reference["per_test_ms"][1] / 1000 + 1.0
    said = re.match(
        r"timed out after ([\d.]+) s", exponential.metadata["test_cases_details"][1]["error_message"]
    )
    assert said is not None and float(said.group(1)) == pytest.approx(limit, abs=1e-3)
    # the per-test limit, far below the 60 s execution_timeout, is what stopped it
    assert exponential.metadata["test_cases_details"][1]["duration_ms"] < 60_000 / 4


def test_the_reference_is_measured_once_and_cached_in_the_store(memory_store: Store) -> None:
    evaluator = CodeCorrectnessEvaluator(time_limit="calibrated")
    run = Run(outputs={"text": FIB_ITERATIVE})
    first = results_of(evaluator.evaluate(run, fib_example()))[0]
    again = results_of(evaluator.evaluate(run, fib_example()))[0]
    assert first.metadata["reference_time"]["cached"] is False
    assert again.metadata["reference_time"]["cached"] is True
    assert again.metadata["reference_time"]["per_test_ms"] == first.metadata["reference_time"]["per_test_ms"]
    other = FIB_ITERATIVE.replace("a, b = 0, 1", "a, b = 0, 1  # another reference")
    changed = results_of(evaluator.evaluate(run, fib_example(other)))[0]
    assert changed.metadata["reference_time"]["cached"] is False  # keyed on the reference's code


@pytest.mark.parametrize(
    "example, message",
    [
        (Example(inputs={"test_cases": FIB_CASES}), "needs the reference solution"),
        (fib_example("def solution(n):\n    return n\n"), "fails its own test case(s) #0, #1"),
        (fib_example("def solution(n) return n"), "does not load"),
    ],
)
def test_a_calibration_that_cannot_be_done_is_an_error_not_the_candidates_failure(
    memory_store: Store, example: Example, message: str
) -> None:
    result = results_of(
        CodeCorrectnessEvaluator(time_limit="calibrated").evaluate(
            Run(outputs={"text": FIB_ITERATIVE}), example
        )
    )[0]
    assert result.score is None and result.error is not None and message in result.error


def test_a_bad_timeout_option_fails_when_the_evaluator_is_built() -> None:
    with pytest.raises(ValueError, match="time_limit must be"):
        CodeCorrectnessEvaluator(time_limit="elastic")
    with pytest.raises(ValueError, match="factor"):
        Calibrated(factor=0.5)
    with pytest.raises(ValueError, match="speed_repeats"):
        CodeCorrectnessEvaluator(speed_repeats=-1)


# -- relative speed -------------------------------------------------------------------------
def test_relative_time_is_a_lower_is_better_metric_with_its_spread(memory_store: Store) -> None:
    evaluator = CodeCorrectnessEvaluator(speed_repeats=3)
    example = Example(
        inputs={"test_cases": [{"input": 27, "expected_output": 196418}]},
        outputs={"reference_code": FIB_ITERATIVE},
    )
    fast_results = results_of(evaluator.evaluate(Run(outputs={"text": FIB_ITERATIVE}), example))
    slow_results = results_of(evaluator.evaluate(Run(outputs={"text": FIB_EXPONENTIAL}), example))
    assert [r.key for r in slow_results] == [
        "CodeCorrectnessEvaluator",
        "CodeCorrectnessEvaluator_relative_time",
    ]
    slow, fast = slow_results[1], fast_results[1]
    assert slow.evaluator_info["direction"] == "lower"
    assert slow.metadata["runs"] == 3 and len(slow.metadata["reference_cpu_ms"]) == 3
    assert slow.metadata["ratio_low"] <= slow.score <= slow.metadata["ratio_high"]
    assert slow.score > 50 * fast.score  # 2^27 calls against 27 steps: no noise hides that


@pytest.mark.slow
@pytest.mark.parametrize("language", COMPILED)
def test_relative_time_in_compiled_languages_counts_the_calls_not_compiling_or_starting(
    memory_store: Store, language: str
) -> None:
    iterative, exponential = FIB[language]
    func_name = "Fib" if language == "go" else "fib"
    example = Example(
        inputs={
            # fib(38): the exponential candidate's ~63 million calls take ~0.2 s even in
            # Java's JIT, so a first-call link or page fault of a few ms in the iterative
            # one (seen: 2.8 ms at fib(32), 28x the reference's floor) cannot close the gap
            "test_cases": [{"input": 38, "expected_output": 39088169}],
            "language": language,
            "func_name": func_name,
        },
        outputs={"reference_code": iterative},
    )
    evaluator = CodeCorrectnessEvaluator(speed_repeats=2)
    slow_results = results_of(evaluator.evaluate(Run(outputs={"text": exponential}), example))
    fast_results = results_of(evaluator.evaluate(Run(outputs={"text": iterative}), example))
    assert [r.key for r in slow_results] == [
        "CodeCorrectnessEvaluator",
        "CodeCorrectnessEvaluator_relative_time",
    ], slow_results[0].comment
    slow, fast = slow_results[1], fast_results[1]
    assert (
        slow.metadata["runs"] == 2 and slow.metadata["ratio_low"] <= slow.score <= slow.metadata["ratio_high"]
    )
    # the reference's 38 steps: microseconds, so no start-up, JIT warm-up or compile is in
    # it (which every run would carry; a first call's link or page fault only one of them)
    assert min(slow.metadata["reference_cpu_ms"]) < 5
    assert slow.score > 50 * fast.score  # 63 million calls against 38 steps


def test_relative_time_under_the_clocks_resolution_compares_as_equal() -> None:
    # the same 32-step Java function, timed in two runs: microseconds of its own, plus a
    # first-call link or a page fault in one of them (seen: 80x for identical code)
    same = relative_time_result("t", [0.081, 0.079], [0.001, 0.002])
    assert same.score == 1.0 and same.metadata["ratio_high"] == 1.0, same.comment
    # above the resolution, a ratio is what it is
    slower = relative_time_result("t", [30.0, 32.0], [0.3, 0.4])
    assert slower.score == pytest.approx(31.0 / 0.35, rel=1e-3)


def test_relative_time_is_not_reported_for_code_that_fails(memory_store: Store) -> None:
    wrong = "def solution(n):\n    return 0\n"
    output = CodeCorrectnessEvaluator(speed_repeats=3).evaluate(Run(outputs={"text": wrong}), fib_example())
    results = results_of(output)
    assert [r.key for r in results] == ["CodeCorrectnessEvaluator"] and results[0].score == 0


def test_a_calibrated_test_program_gets_k_times_the_reference_program_plus_the_floor(
    memory_store: Store,
) -> None:
    test = "def check(candidate):\n    assert candidate(10) == 55\n    assert candidate(40) == 102334155\n"
    example = Example(
        inputs={"prompt": "", "test": test, "entry_point": "solution", "canonical_solution": FIB_ITERATIVE}
    )
    evaluator = CodeCorrectnessEvaluator(time_limit=Calibrated(factor=2, floor=0.5), execution_timeout=60)
    passed = results_of(evaluator.evaluate(Run(outputs={"text": FIB_SLOWER}), example))[0]
    assert passed.score == 1, passed.comment
    total_ms = passed.metadata["reference_time"]["total_ms"]
    slow = results_of(evaluator.evaluate(Run(outputs={"text": FIB_EXPONENTIAL}), example))[0]
    assert slow.score == 0 and slow.metadata["verdict"]["kind"] == "timeout"
    assert slow.metadata["duration_ms"] < 2 * total_ms + 500 + 3000  # its limit, not the 60 s


def test_through_evaluate_the_second_experiment_reuses_the_measurement(client: assay.Client) -> None:
    dataset = client.create_dataset("fib")
    client.create_example(
        dataset_id=dataset.id, inputs={"test_cases": FIB_CASES}, outputs={"reference_code": FIB_ITERATIVE}
    )
    evaluator = CodeCorrectnessEvaluator(time_limit="calibrated", speed_repeats=2)
    cached = []
    for _ in range(2):
        rows = list(
            assay.evaluate(
                lambda inputs: {"text": FIB_ITERATIVE}, data="fib", client=client, evaluators=[evaluator]
            )
        )
        correctness, relative = rows[0]["evaluation_results"]["results"]
        assert relative.key == "CodeCorrectnessEvaluator_relative_time" and relative.score is not None
        cached.append(correctness.metadata["reference_time"]["cached"])
    assert cached == [False, True]  # measured once, in the experiment's own store


@pytest.mark.parametrize(
    "language, code",
    [
        (
            "python",
            "import time\ntime.perf_counter = lambda: 0.0\ntime.thread_time = lambda: 0.0\n"
            "time.process_time = lambda: 0.0\n" + BUSY_LOOP,
        ),
        (
            "javascript",
            "process.hrtime.bigint = () => 0n; process.cpuUsage = () => ({ user: 0, system: 0 });\n"
            "function solution(n) { let t = 0; for (let i = 0; i < n; i++) t += i; return t; }",
        ),
    ],
)
def test_code_that_patches_the_clocks_does_not_change_what_the_harness_measures(
    language: str, code: str
) -> None:
    example = Example(
        inputs={"test_cases": [{"input": 3_000_000, "expected_output": 4499998500000}], "language": language}
    )
    result = results_of(CodeCorrectnessEvaluator().evaluate(Run(outputs={"text": code}), example))[0]
    assert result.score == 1, result.comment
    (detail,) = result.metadata["test_cases_details"]
    assert detail["cpu_ms"] > 1 and detail["wall_ms"] > 1


def test_the_run_budget_covers_loading_as_long_as_the_references(memory_store: Store) -> None:
    """A slow start (a compile step, a heavy import) that the reference shares is not a
    timeout: the whole run may take k x the reference's time outside its calls too."""
    slow_start = "import time\ntime.sleep(1.5)\n" + FIB_ITERATIVE
    example = fib_example(slow_start)
    evaluator = CodeCorrectnessEvaluator(time_limit=Calibrated(factor=2, floor=0.3), execution_timeout=30)
    result = results_of(evaluator.evaluate(Run(outputs={"text": slow_start}), example))[0]
    assert result.score == 1, result.comment
    assert result.metadata["reference_time"]["load_ms"] >= 1500
    slower_start = "import time\ntime.sleep(6)\n" + FIB_ITERATIVE
    late = results_of(evaluator.evaluate(Run(outputs={"text": slower_start}), example))[0]
    assert late.score == 0 and late.metadata["load_error"] == "timeout"


# -- times from the kernel, not from code linked into the candidate ------------------------
FORGES_ITS_CLOCK = """#include <time.h>
extern "C" int clock_gettime(clockid_t, struct timespec* now) {
    now->tv_sec = 0;
    now->tv_nsec = 0;
    return 0;
}
"""
# the harness's frames pass through the candidate's write(): their times zeroed (the
# numbers overwritten in place, padded with spaces, so the frame keeps its length)
FORGES_ITS_FRAMES = """#include <cstring>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>
extern "C" ssize_t write(int fd, const void* data, size_t size) {
    std::string frame(static_cast<const char*>(data), size);
    for (const char* key : {"\\"wall_ms\\":", "\\"cpu_ms\\":"}) {
        size_t at = frame.find(key);
        if (at == std::string::npos) continue;
        at += std::strlen(key);
        frame[at++] = '0';
        while (at < frame.size() && std::strchr("0123456789.eE+-", frame[at])) frame[at++] = ' ';
    }
    return syscall(SYS_write, fd, frame.data(), frame.size());
}
"""
# the harness's own timing function (in its prebuilt object) defined again, inline: the
# linker keeps the object's, but the candidate's own unit inlines its copy
FORGES_ITS_TIMER = """namespace assay {
__attribute__((always_inline)) inline Json timed(Call& call, Json& spent) {
    call.run();
    Json zero;
    zero.kind = Json::Float;
    spent.kind = Json::Obj;
    spent.o = {{"wall_ms", zero}, {"cpu_ms", zero}};
    return call.value();
}
}  // namespace assay
"""
FORGERIES = {"clock_gettime": FORGES_ITS_CLOCK, "write": FORGES_ITS_FRAMES, "inline_timed": FORGES_ITS_TIMER}


@pytest.mark.slow
@pytest.mark.toolchains
@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_cpp_candidate_forging_its_clock_does_not_change_its_measured_time(forgery: str) -> None:
    n = 30_000_000
    example = Example(inputs={"test_cases": [{"input": n, "expected_output": spun(n)}], "language": "cpp"})
    evaluator = CodeCorrectnessEvaluator(execution_timeout=60)
    honest, forged = (
        results_of(evaluator.evaluate(Run(outputs={"text": code}), example))[0]
        for code in (SPIN["cpp"], FORGERIES[forgery] + SPIN["cpp"])
    )
    assert honest.score == forged.score == 1, forged.comment
    (spent,) = forged.metadata["test_cases_details"]
    (reference,) = honest.metadata["test_cases_details"]
    # the same loop: the same order of CPU time, whatever its clock says (30 M steps: tens of ms)
    assert spent["cpu_ms"] > 10 and spent["cpu_ms"] > reference["cpu_ms"] / 5, (spent, reference)
    assert spent["cpu_source"] == "kernel" and reference["cpu_source"] == "checked"


@pytest.mark.slow
@pytest.mark.toolchains
@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_cpp_test_program_candidate_forging_its_clock_does_not_change_its_time(forgery: str) -> None:
    prompt, body, test, entry = SPIN_PROGRAMS["cpp"]
    example = Example(inputs={"prompt": prompt, "test": test, "entry_point": entry, "language": "cpp"})
    evaluator = CodeCorrectnessEvaluator(execution_timeout=60)
    result = results_of(evaluator.evaluate(Run(outputs={"text": body + FORGERIES[forgery]}), example))[0]
    assert result.score == 1, result.comment
    spent = result.metadata["execution_time"]
    assert spent["calls"] == 2 and spent["cpu_ms"] > 1, spent  # 3 million steps: milliseconds
    assert result.metadata["verdict"]["time"]["cpu_source"] == "kernel"


# -- calibration: the reference's CPU time, steady runs only ---------------------------------
def test_calibration_limits_rest_on_the_references_cpu_time_beside_a_cpu_hog(
    memory_store: Store, busy_cpus: None
) -> None:
    n = 1_000_000
    example = Example(
        inputs={"test_cases": [{"input": n, "expected_output": n * (n - 1) // 2}]},
        outputs={"reference_code": BUSY_LOOP},
    )
    evaluator = CodeCorrectnessEvaluator(time_limit=Calibrated(factor=4, floor=1.0), execution_timeout=120)
    result = results_of(evaluator.evaluate(Run(outputs={"text": BUSY_LOOP}), example))[0]
    assert result.score == 1, result.comment
    measured = result.metadata["reference_time"]
    # the limit's basis is the call's CPU time (what the hog cannot stretch), not the
    # parent's wall time from sending the call to its reply (which it can, several-fold)
    assert measured["per_test_ms"] == measured["cpu_ms"], measured
    (detail,) = result.metadata["test_cases_details"]
    assert detail["cpu_source"] in ("checked", "kernel") and detail["cpu_ms"] <= detail["duration_ms"]


@pytest.mark.parametrize(
    "totals, refused",
    [
        ([100.0, 105.0, 98.0], False),  # steady
        ([0.02, 0.09, 0.05], False),  # microseconds: the clocks' noise, not contention
        ([100.0, 400.0, 110.0], True),  # one run four times the others: a busy machine
        ([10.0, 29.0, 12.0], False),  # under the noise floor in absolute terms
        ([50.0], False),  # one run has no spread
    ],
)
def test_a_calibration_whose_runs_spread_says_the_machine_was_contended(
    totals: list[float], refused: bool
) -> None:
    from assay.evaluators.code._calibrate import contended

    runs = [([total], [total], [total], 0.0) for total in totals]
    assert (contended(runs) is not None) == refused


def test_a_contended_calibration_is_refused_and_not_cached(
    memory_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.evaluators.code import _calibrate

    spread = iter([10.0, 900.0, 30.0] * 2 + [10.0, 11.0, 12.0])  # two busy rounds, then a quiet one
    real = _calibrate._run_once

    def noisy(pool: Any, job: Any) -> Any:
        basis, cpu, wall, load = real(pool, job)
        return [next(spread)] * len(basis), cpu, wall, load

    monkeypatch.setattr(_calibrate, "_run_once", noisy)
    evaluator = CodeCorrectnessEvaluator(time_limit="calibrated")
    run = Run(outputs={"text": FIB_ITERATIVE})
    refused = results_of(evaluator.evaluate(run, fib_example()))[0]
    assert refused.score is None and refused.error is not None and "too busy" in refused.error
    measured = results_of(evaluator.evaluate(run, fib_example()))[0]
    assert measured.score == 1 and measured.metadata["reference_time"]["cached"] is False


PYTHON_FORGES_ITS_CLOCK = """import sys
for module in list(sys.modules.values()):
    if hasattr(module, "_cpu") and hasattr(module, "_elapsed"):  # the harness's clocks
        module._cpu = module._wall = lambda: 0.0


def solution(n):
    t = 0
    for i in range(n):
        t = (t * 31 + i) % 1000003
    return t
"""


@pytest.mark.slow
def test_a_python_test_program_candidate_patching_its_clock_does_not_change_its_time() -> None:
    """An interpreted candidate's time in a test program is its sandbox's CPU count from
    the checker's go-ahead (it loaded) to the verdict: before, it was the sum of its own
    replies, 0 ms for a candidate that zeroed the harness's clock."""
    n = 1_000_000
    test = f"def check(candidate):\n    assert candidate(10) == {spun(10)}\n    assert candidate({n}) == {spun(n)}\n"
    example = Example(inputs={"prompt": "", "test": test, "entry_point": "solution", "language": "python"})
    honest_code = PYTHON_FORGES_ITS_CLOCK.split("\n\n\n", 1)[1]
    honest, forged = (
        results_of(CodeCorrectnessEvaluator().evaluate(Run(outputs={"text": code}), example))[0]
        for code in (honest_code, PYTHON_FORGES_ITS_CLOCK)
    )
    assert honest.score == forged.score == 1, forged.comment
    spent, reference = forged.metadata["execution_time"], honest.metadata["execution_time"]
    assert forged.metadata["verdict"]["time"]["cpu_source"] == "kernel"
    assert honest.metadata["verdict"]["time"]["cpu_source"] in ("checked", "kernel")
    # a million Python steps: tens of ms at least, whatever the patched clock says
    assert spent["cpu_ms"] > 10 and spent["cpu_ms"] > reference["cpu_ms"] / 5, (spent, reference)


@pytest.mark.slow
def test_a_javascript_test_program_time_is_borne_out_by_the_kernel() -> None:
    code = "function solution(n) { let t = 0; for (let i = 0; i < n; i++) t = (t * 31 + i) % 1000003; return t; }"
    test = f"function check(candidate) {{ if (candidate(3000000) !== {spun(3_000_000)}) throw new Error('no'); }}"
    example = Example(
        inputs={"prompt": "", "test": test, "entry_point": "solution", "language": "javascript"}
    )
    result = results_of(CodeCorrectnessEvaluator().evaluate(Run(outputs={"text": code}), example))[0]
    assert result.score == 1, result.comment
    assert result.metadata["verdict"]["time"]["cpu_source"] in ("checked", "kernel")
    assert result.metadata["execution_time"]["cpu_ms"] > 1
