"""The verdicts of a set of C++ candidates (right, wrong, broken, hostile), in test-case and
test-program mode, this checkout against another (``--before``): each side in a process
of its own; prints the rows that differ (a change of the harness must change none but
those it means to).

    .venv/bin/python bench/cpp_verdicts.py --before /work/wt/base

A verdict here is what an evaluator reports: the score, the verdict's stage and kind, and
the first line of its message with the build's folder names left out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

SPIN = "    long long t = 0;\n    for (long long i = 0; i < n; i++) t = (t * 31 + i) % 1000003;\n    return t;\n}\n"
RIGHT = "long long solution(long long n) {\n" + SPIN
CANDIDATES = {
    "right": RIGHT,
    "wrong": "long long solution(long long n) {\n    return n;\n}\n",
    "compile_error": "long long solution(long long n) {\n    return n +;\n}\n",
    "undefined_function": "long long solution(long long n);\n",
    "missing_function": "long long other(long long n) {\n    return n;\n}\n",
    "throws": '#include <stdexcept>\nlong long solution(long long n) {\n    throw std::out_of_range("no");\n}\n',
    "throws_int": "long long solution(long long n) {\n    throw 7;\n}\n",
    "wrong_type": "#include <string>\nstd::string solution(std::string n) {\n    return n;\n}\n",
    "segfault": "long long solution(long long n) {\n    volatile int* p = nullptr;\n    return *p;\n}\n",
    "aborts": "#include <cstdlib>\nlong long solution(long long n) {\n    std::abort();\n}\n",
    "exits": "#include <cstdlib>\nlong long solution(long long n) {\n    std::exit(0);\n}\n",
    "loops": "long long solution(long long n) {\n    volatile long long x = 0;\n    for (;;) x = x + 1;\n}\n",
    "prints": '#include <cstdio>\nlong long solution(long long n) {\n    std::printf("noise\\n");\n' + SPIN,
    "define_int": "#define int long long\nint solution(int n) {\n" + SPIN,
    "bits_stdcxx": "#include <bits/stdc++.h>\nusing namespace std;\nlong long solution(long long n) {\n"
    + SPIN,
    "clock_gettime": '#include <time.h>\nextern "C" int clock_gettime(clockid_t, struct timespec* t) {\n'
    "    t->tv_sec = t->tv_nsec = 0;\n    return 0;\n}\n" + RIGHT,
    "write_dropped": '#include <unistd.h>\nextern "C" ssize_t write(int, const void*, size_t n) {\n'
    "    return (ssize_t)n;\n}\n" + RIGHT,
    "exit_defined": 'extern "C" void exit(int) {\n    for (;;) {}\n}\n' + RIGHT,
    "_exit_defined": 'extern "C" void _Exit(int) {}\n' + RIGHT,
    "redefines_read_frame": "namespace assay {\nbool read_frame(Json& frame) {\n    return false;\n}\n}\n"
    + RIGHT,
    "redefines_write_frame": "namespace assay {\nvoid write_frame(const Json&) {}\n}\n" + RIGHT,
    "own_namespace_assay": "namespace assay {\nint helper() {\n    return 1;\n}\n}\n" + RIGHT,
    "static_constructor_writes": '#include <unistd.h>\nstatic int forged = (write(4, "\\0\\0\\0\\2{}", 6), 0);\n'
    + RIGHT,
}
TEST = "#undef NDEBUG\n#include <assert.h>\nint main() {\n    assert(solution(100) == {expected});\n}\n"


def spun(n: int) -> int:
    t = 0
    for i in range(n):
        t = (t * 31 + i) % 1000003
    return t


def verdicts() -> dict[str, object]:
    """(In the side's process.) Every candidate in both modes: name -> its verdict."""
    import warnings

    from assay.evaluation import EvaluationResult, EvaluationResults
    from assay.evaluators import CodeCorrectnessEvaluator
    from assay.sandbox import SandboxIsolationWarning
    from assay.schemas import Example, Run

    warnings.simplefilter("ignore", SandboxIsolationWarning)
    evaluator = CodeCorrectnessEvaluator(execution_timeout=10)
    cases = Example(inputs={"test_cases": [{"input": 100, "expected_output": spun(100)}], "language": "cpp"})
    program = Example(
        inputs={
            "prompt": "",
            "test": TEST.replace("{expected}", str(spun(100))),
            "entry_point": "solution",
            "language": "cpp",
        }
    )
    found: dict[str, object] = {}
    for name, code in CANDIDATES.items():
        for mode, example in (("cases", cases), ("program", program)):
            result = evaluator.evaluate(Run(outputs={"text": code}), example)
            first = result.results[0] if isinstance(result, EvaluationResults) else result
            assert isinstance(first, EvaluationResult)
            found[f"{name} ({mode})"] = summary(first.score, first.metadata)
    return found


def summary(score: object, metadata: dict[str, object]) -> list[object]:
    verdict = metadata.get("verdict") if isinstance(metadata.get("verdict"), dict) else {}
    assert isinstance(verdict, dict)
    message = str(verdict.get("message") or metadata.get("load_error") or "")
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = re.sub(r"/\S+/", "…/", first)  # the build's folders
    return [score, verdict.get("stage"), verdict.get("kind"), first[:100]]


def side(checkout: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": os.path.join(checkout, "src")}
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--side"], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="another checkout (its src/ is imported)")
    parser.add_argument("--side", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        print(json.dumps(verdicts()))
        return
    after = side(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    before = side(args.before) if args.before else after
    for name in after:
        mark = "same" if after[name] == before[name] else "DIFFERS"
        print(
            f"{mark:<7} {name}: {after[name]}"
            + ("" if mark == "same" else f"\n        before: {before[name]}")
        )


if __name__ == "__main__":
    main()
