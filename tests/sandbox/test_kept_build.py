"""A compiled candidate is compiled once per job, whatever its calls do: when its process
ends mid-job, the next process runs the job's first build (kept by the sandbox between the
two, see ``harness/kept_build``), and only if that build is byte for byte what was built."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from assay.sandbox import Call, FunctionRun, SandboxPool, get_language

pytestmark = [
    pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning"),
    pytest.mark.slow,
    pytest.mark.toolchains,
]

# n < 0 ends the process (as a candidate's exit or crash does); else 2n
EXITS = {
    "go": 'import "os"\n\nfunc solution(n int) int {\n\tif n < 0 {\n\t\tos.Exit(3)\n\t}\n\treturn 2 * n\n}\n',
    "cpp": "#include <cstdlib>\nint solution(int n) {\n    if (n < 0) std::exit(3);\n    return 2 * n;\n}\n",
    "java": "class Solution {\n    public static int solution(int n) {\n"
    "        if (n < 0) System.exit(3);\n        return 2 * n;\n    }\n}\n",
}
# ... and n == 0 appends to the kept build (1 if it could), the attack on the reuse
TAMPERS = {
    "go": 'import "os"\n\nfunc solution(n int) int {\n\tif n < 0 {\n\t\tos.Exit(3)\n\t}\n\tif n == 0 {\n'
    '\t\tf, err := os.OpenFile("../build/program", os.O_APPEND|os.O_WRONLY, 0)\n'
    "\t\tif err != nil {\n\t\t\treturn 0\n\t\t}\n"
    '\t\tf.Write([]byte("tampered"))\n\t\tf.Close()\n\t\treturn 1\n\t}\n\treturn 2 * n\n}\n',
    "go-symlink": 'import "os"\n\nfunc solution(n int) int {\n\tif n < 0 {\n\t\tos.Exit(3)\n\t}\n\tif n == 0 {\n'
    '\t\tos.Remove("../build/program")\n'
    '\t\tif os.Symlink("/bin/sh", "../build/program") != nil {\n\t\t\treturn 0\n\t\t}\n'
    "\t\treturn 1\n\t}\n\treturn 2 * n\n}\n",
    "cpp": "#include <cstdio>\n#include <cstdlib>\nint solution(int n) {\n    if (n < 0) std::exit(3);\n"
    '    if (n == 0) {\n        FILE* f = std::fopen("../build/program", "ab");\n'
    '        if (!f) return 0;\n        std::fputs("tampered", f);\n        std::fclose(f);\n'
    "        return 1;\n    }\n    return 2 * n;\n}\n",
}


def run(pool: SandboxPool, language: str, code: str, inputs: list[int]) -> FunctionRun:
    """One job of ``code``, as a source new to this process: the same bytes would share
    an earlier job's build (see test_shared_builds), and these tests count compiles."""
    calls = [Call((n,)) for n in inputs]
    fresh = f"{code}\n// {uuid.uuid4().hex}\n"
    return pool.run_function(get_language(language), fresh, "solution", calls, timeout=60)


def summary(result: FunctionRun) -> list[Any]:
    return [o.value if o.ok else o.status for o in result.outcomes]


@pytest.mark.parametrize("language", sorted(EXITS))
def test_a_candidate_that_ends_its_process_is_compiled_once(make_pool: Any, language: str) -> None:
    result = run(make_pool("bubblewrap"), language, EXITS[language], [1, -1, 2, -1, -1, 3])
    assert summary(result) == [2, "crashed", 4, "crashed", "crashed", 6], result.outcomes
    assert result.restarts == 3
    assert result.compiles == 1  # four processes, one compile


def test_on_every_backend_a_restart_reuses_the_build(pool: SandboxPool) -> None:
    result = run(pool, "go", EXITS["go"], [-1, 5, -1, 7])
    assert summary(result) == ["crashed", 10, "crashed", 14]
    assert (result.restarts, result.compiles) == (2, 1)


@pytest.mark.parametrize("language", sorted(TAMPERS))
def test_a_kept_build_the_candidate_changed_is_compiled_again(pool: SandboxPool, language: str) -> None:
    """The candidate appends to the kept binary, or puts a link to a shell in its place
    (it can: the folder is the sandbox user's), and exits; the next process finds the
    copy's digest wrong (or a link) and compiles afresh."""
    result = run(pool, language.split("-")[0], TAMPERS[language], [0, -1, 5])
    assert summary(result) == [1, "crashed", 10], result.outcomes  # 1: the append happened
    assert result.compiles == 2


def test_the_kept_build_does_not_outlive_its_job(make_pool: Any) -> None:
    """A job that ends leaves no build behind: the next job (another candidate) compiles."""
    pool = make_pool("bubblewrap")
    first = run(pool, "go", EXITS["go"], [-1, 1])
    second = run(pool, "go", EXITS["go"].replace("2 * n", "3 * n"), [-1, 1])
    assert (summary(first), summary(second)) == (["crashed", 2], ["crashed", 3])
    assert (first.compiles, second.compiles) == (1, 1)
