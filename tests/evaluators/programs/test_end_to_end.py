"""ProgramEvaluator end to end on every backend: each verdict kind, per-test figures
from the kernel, the first differing line, stop-at-first-failure against run-all, a
program built once for all its tests, and checker programs in several languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.evaluators import CheckerProgram, ProgramEvaluator
from assay.sandbox import SandboxConfig
from assay.schemas import Example

from ._helpers import Judge, run_of

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

ADD = [
    {"input": "1 2\n", "output": "3\n"},
    {"input": "40 2\n", "output": "42\n"},
    {"input": "-1 1\n", "output": "0\n"},
]
PY_ADD = "a, b = map(int, input().split())\nprint(a + b)\n"


def test_accepted_with_kernel_figures_per_test(judge: Judge) -> None:
    result = judge(PY_ADD, ADD)
    assert (result.score, result.feedback, result.comment) == (1.0, "accepted", "accepted: 3/3 tests")
    tests = result.metadata["tests"]
    assert [t["verdict"] for t in tests] == ["accepted"] * 3
    for test in tests:
        assert test["cpu_source"] in ("cgroup", "rusage") and test["cpu_ms"] >= 0
        assert test["peak_memory_kb"] is not None and test["wall_ms"] > 0


def test_wrong_answer_names_the_test_and_line(judge: Judge) -> None:
    code = "a, b = map(int, input().split())\nprint(a + b)\nprint('extra')\n"
    result = judge(code, [{"input": "1 2\n", "output": "3\nfine\n"}], checker="exact")
    assert result.score == 0 and result.metadata["verdict"] == "wrong_answer"
    assert result.comment == "wrong answer on test 0: line 2: expected 'fine', got 'extra'"


def test_run_all_gives_a_partial_score_and_stop_runs_no_further(judge: Judge) -> None:
    tests = [*ADD, {"input": "2 2\n", "output": "5\n"}, {"input": "0 0\n", "output": "0\n"}]
    every = judge(PY_ADD, tests, stop_on_failure=False)
    assert every.score == pytest.approx(4 / 5)
    assert [t["verdict"] for t in every.metadata["tests"]] == ["accepted"] * 3 + ["wrong_answer", "accepted"]
    stopped = judge(PY_ADD, tests)
    assert stopped.score == 0
    assert [t["verdict"] for t in stopped.metadata["tests"]] == ["accepted"] * 3 + ["wrong_answer", "not_run"]


def test_time_limit_by_cpu_counts_the_kernel_not_the_program(judge: Judge) -> None:
    """The program replaces every clock it can reach; the verdict does not move."""
    code = "import time\ntime.time = time.monotonic = time.process_time = time.perf_counter = lambda: 0.0\nwhile True:\n    pass\n"
    result = judge(code, ADD[:1], time_limit=0.5)
    test = result.metadata["tests"][0]
    assert test["verdict"] == "time_limit", test
    assert test["cpu_ms"] > 500 and "of CPU time" in test["message"]


def test_sleeping_is_a_time_limit_by_wall_clock_with_little_cpu(judge: Judge) -> None:
    result = judge("import time\ntime.sleep(3600)\n", ADD[:1], time_limit=0.5)
    test = result.metadata["tests"][0]
    assert test["verdict"] == "time_limit" and "wall-clock" in test["message"]
    assert test["cpu_ms"] < 500


def test_memory_limit(judge: Judge) -> None:
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))\n"
    result = judge(code, ADD[:1], memory_limit_mb=128)
    assert result.metadata["verdict"] == "memory_limit", result.comment


def test_runtime_errors_by_exit_code_and_signal(judge: Judge) -> None:
    exited = judge("print(3)\nimport sys\nsys.exit(4)\n", ADD[:1])
    assert exited.metadata["verdict"] == "runtime_error" and "exit code 4" in exited.comment
    killed = judge("import os, signal\nprint(3, flush=True)\nos.kill(os.getpid(), signal.SIGABRT)\n", ADD[:1])
    assert killed.metadata["verdict"] == "runtime_error" and "SIGABRT" in killed.comment


def test_python_syntax_error_is_a_compile_error(judge: Judge) -> None:
    result = judge("def f(:\n", ADD)
    assert result.metadata["verdict"] == "compile_error" and "SyntaxError" in result.comment
    assert [t["verdict"] for t in result.metadata["tests"]] == ["not_run"] * 3


def test_output_limit(judge: Judge) -> None:
    result = judge("while True:\n    print('y' * 1000)\n", ADD[:1], output_limit_mb=1)
    assert result.metadata["verdict"] == "output_limit"


def test_floats_and_case_checkers(judge: Judge) -> None:
    third = [{"input": "1 3\n", "output": "0.333333333\n"}]
    code = "a, b = map(int, input().split())\nprint(round(a / b, 7))\n"
    assert judge(code, third, checker="floats").score == 1
    assert judge(code, third, checker="floats", abs_tol=1e-9, rel_tol=1e-9).score == 0
    assert judge("print('yes')", [{"input": "", "output": "YES"}], checker="case_insensitive").score == 1


PY_CHECKER = """import sys
n = int(open(sys.argv[1]).read())
got = open(sys.argv[2]).read().split()
if len(got) == 1 and got[0].isdigit() and 1 < int(got[0]) < n and n % int(got[0]) == 0:
    sys.exit(0)
print("not a proper divisor:", got[:3], file=sys.stderr)
sys.exit(1)
"""
DIVISOR_TESTS = [{"input": "12\n", "output": "2\n"}, {"input": "15\n", "output": "3\n"}]


def test_a_checker_program_accepts_any_right_answer(judge: Judge) -> None:
    largest = "n = int(input())\nprint(max(d for d in range(2, n) if n % d == 0))\n"
    accepted = judge(largest, DIVISOR_TESTS, checker=CheckerProgram("python", PY_CHECKER))
    assert accepted.score == 1 and accepted.metadata["checker"] == "program"
    wrong = judge("print(1)", DIVISOR_TESTS, checker=CheckerProgram("python", PY_CHECKER))
    assert wrong.metadata["verdict"] == "wrong_answer"
    assert "not a proper divisor: ['1']" in wrong.comment


def test_a_checker_that_crashes_is_the_checkers_failure(judge: Judge) -> None:
    result = judge("print(2)", DIVISOR_TESTS, checker=CheckerProgram("python", "raise SystemExit(3)"))
    assert result.score == 0 and result.metadata["verdict"] == "checker_failed"


def test_a_checker_that_does_not_build_is_an_error_not_a_score(backend: str) -> None:
    evaluator = ProgramEvaluator(
        sandbox=SandboxConfig(backend=backend), checker=CheckerProgram("cpp", "int main( {")
    )
    result = evaluator.evaluate(run_of("print(2)"), Example(inputs={"tests": DIVISOR_TESTS}, outputs={}))
    assert result.score is None and "checker program does not build" in (result.error or "")


# -- compiled languages --------------------------------------------------------------------------
CPP_ADD = (
    "#include <iostream>\nint main() { long long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n"
)
GO_ADD = 'package main\nimport "fmt"\nfunc main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(a + b) }\n'
JAVA_ADD = (
    "import java.util.*;\npublic class Main { public static void main(String[] x) {"
    " Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }\n"
)
JS_ADD = "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n"


@pytest.mark.toolchains
@pytest.mark.parametrize(
    ("language", "code"), [("cpp", CPP_ADD), ("go", GO_ADD), ("java", JAVA_ADD), ("javascript", JS_ADD)]
)
def test_compiled_and_node_programs_are_accepted(judge: Judge, language: str, code: str) -> None:
    result = judge(code, ADD, inputs={"language": language})
    assert result.score == 1, result.comment
    if language != "javascript":
        assert result.metadata["compile_ms"] > 0


@pytest.mark.toolchains
def test_a_compile_error_shows_the_compiler(judge: Judge) -> None:
    result = judge("int main() { return x; }\n", ADD, language="cpp")
    assert (
        result.metadata["verdict"] == "compile_error" and "was not declared in this scope" in result.comment
    )
    assert result.feedback == "compile error"


@pytest.mark.toolchains
def test_the_program_is_built_once_for_all_tests(judge: Judge) -> None:
    """Each run counts itself in a file beside its binary: the same binary, one build."""
    code = """#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>
int main() {
    char exe[4096] = {0};
    readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::string count = std::string(exe) + ".runs";
    int runs = 0;
    { std::ifstream in(count); in >> runs; }
    { std::ofstream out(count); out << runs + 1; }
    std::cout << runs + 1 << std::endl;
}
"""
    tests = [{"input": "", "output": f"{n}\n"} for n in (1, 2, 3, 4)]
    result = judge(code, tests, language="cpp")
    assert result.score == 1, result.comment


@pytest.mark.toolchains
def test_cpp_memory_and_crash_verdicts(judge: Judge) -> None:
    hog = "#include <vector>\nint main() { std::vector<std::vector<char>> v; while (true) v.emplace_back(1 << 24, 1); }\n"
    assert judge(hog, ADD[:1], language="cpp", memory_limit_mb=128).metadata["verdict"] == "memory_limit"
    crash = "int main() { int* p = nullptr; return *p; }\n"
    result = judge(crash, ADD[:1], language="cpp")
    assert result.metadata["verdict"] == "runtime_error" and "SIGSEGV" in result.comment


CPP_CHECKER = """#include <cstdio>
int main(int argc, char** argv) {
    long long n, d; FILE* in = fopen(argv[1], "r"); FILE* out = fopen(argv[2], "r");
    if (fscanf(in, "%lld", &n) != 1) return 3;
    if (fscanf(out, "%lld", &d) != 1) { fprintf(stderr, "wrong answer: no number\\n"); return 1; }
    if (d > 1 && d < n && n % d == 0) return 0;
    fprintf(stderr, "wrong answer: %lld does not divide %lld\\n", d, n);
    return 1;
}
"""


@pytest.mark.toolchains
def test_a_cpp_checker_program(judge: Judge) -> None:
    smallest = "n = int(input())\nprint(min(d for d in range(2, n) if n % d == 0))\n"
    assert judge(smallest, DIVISOR_TESTS, checker=CheckerProgram("cpp", CPP_CHECKER)).score == 1
    wrong = judge("print(7)", DIVISOR_TESTS, checker=CheckerProgram("cpp", CPP_CHECKER))
    assert wrong.comment == "wrong answer on test 0: wrong answer: 7 does not divide 12"


def test_large_test_files_stream_through_in_bounded_parent_memory(judge: Judge, tmp_path: Path) -> None:
    """30 MiB in and 30 MiB out, from files: neither is ever held whole by the parent."""
    import tracemalloc

    line = b" ".join(b"%d" % i for i in range(1000)) + b"\n"
    data = line * (30 * 1024 * 1024 // len(line))
    (tmp_path / "big.in").write_bytes(data)
    (tmp_path / "big.out").write_bytes(data)
    tests = [{"input_file": str(tmp_path / "big.in"), "output_file": str(tmp_path / "big.out")}]
    echo = "import sys\nfor chunk in iter(lambda: sys.stdin.buffer.read(1 << 16), b''):\n    sys.stdout.buffer.write(chunk)\n"
    tracemalloc.start()
    try:
        result = judge(echo, tests, checker="exact", time_limit=10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.score == 1, result.comment
    assert peak < 16 * (1 << 20), f"the parent held {peak / (1 << 20):.1f} MiB"
