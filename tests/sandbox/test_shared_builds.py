"""Compile once per content (``sandbox/_shared_builds.py``): identical compiled candidates
share one build, and so do the jobs of one test program; a compile error is the same
outcome again; no job can change what the next one runs; and a shared build lies where
no sandbox can read it (see also ``test_shared_build_secrecy``)."""

from __future__ import annotations

import os
import stat
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from assay.sandbox import Call, FunctionRun, SandboxPool, get_language
from assay.sandbox import _shared_builds as shared_builds
from assay.sandbox import _toolchains as toolchains

pytestmark = [
    pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning"),
    pytest.mark.slow,
    pytest.mark.toolchains,
]

ADD = {
    "go": "func Add(a, b int) int {\n\treturn a + b\n}\n",
    "cpp": "int Add(int a, int b) {\n    return a + b;\n}\n",
    "java": "class Solution {\n    public static int Add(int a, int b) {\n        return a + b;\n    }\n}\n",
}
# every file under the roots, opened for writing, truncated, removed: the number of
# those that worked (the roots are where each backend shows the toolchain cache, and
# the shared builds' staging folder)
TAMPER = """import (
\t"os"
\t"path/filepath"
)

func Add(a, b int) int {
\tdone := 0
\tfor _, root := range []string{%s} {
\t\tfilepath.Walk(root, func(p string, info os.FileInfo, err error) error {
\t\t\tif err != nil || info.IsDir() {
\t\t\t\treturn nil
\t\t\t}
\t\t\tif f, e := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0); e == nil {
\t\t\t\tf.Write([]byte("tampered"))
\t\t\t\tf.Close()
\t\t\t\tdone++
\t\t\t}
\t\t\tif os.Remove(p) == nil {
\t\t\t\tdone++
\t\t\t}
\t\t\treturn nil
\t\t})
\t}
\treturn done
}
"""
ADD_PROMPT = "func Add(a, b int) int {\n"
ADD_TEST = "func TestAdd(t *testing.T) {\n\tassert := assert.New(t)\n\tassert.Equal(3, Add(1, 2))\n}\n"


def unique(code: str, language: str) -> str:
    """The same code under a key no other test (nor an earlier run) has built."""
    return code + f"\n// {uuid.uuid4().hex}\n"


def stats_after(action: Callable[[], Any]) -> tuple[Any, Counter[str]]:
    before = Counter(shared_builds.BUILDS.stats)
    result = action()
    return result, Counter(shared_builds.BUILDS.stats) - before


def add(pool: SandboxPool, language: str, code: str) -> FunctionRun:
    return pool.run_function(get_language(language), code, "Add", [Call((1, 2))], timeout=60)


@pytest.mark.parametrize("language", sorted(ADD))
def test_identical_candidates_compile_once(make_pool: Any, language: str) -> None:
    pool: SandboxPool = make_pool("bubblewrap")
    code = unique(ADD[language], language)
    runs, counted = stats_after(lambda: [add(pool, language, code) for _ in range(3)])
    assert [[o.value for o in run.outcomes] for run in runs] == [[3], [3], [3]]
    assert [run.compiles for run in runs] == [1, 0, 0]
    assert counted == Counter(built=1, reused=2)


@pytest.mark.parametrize("language", sorted(ADD))
def test_a_compile_error_is_reused_as_the_same_outcome(make_pool: Any, language: str) -> None:
    pool: SandboxPool = make_pool("bubblewrap")
    code = unique(ADD[language], language) + "not a declaration\n"
    runs, counted = stats_after(lambda: [add(pool, language, code) for _ in range(2)])
    failures = [run.load_failure for run in runs]
    assert all(f is not None and f.kind == "compile" for f in failures), failures
    assert failures[0] == failures[1]
    assert counted == Counter(built=1, error_reused=1)


def test_a_different_source_or_limit_is_another_build(make_pool: Any) -> None:
    from assay.sandbox import Limits

    pool: SandboxPool = make_pool("bubblewrap")
    code = unique(ADD["cpp"], "cpp")
    other = code.replace("a + b", "b + a")
    _, counted = stats_after(lambda: (add(pool, "cpp", code), add(pool, "cpp", other)))
    assert counted == Counter(built=2)
    low = Limits(memory_bytes=256 << 20)
    run, counted = stats_after(
        lambda: pool.run_function(get_language("cpp"), code, "Add", [Call((1, 2))], 60, low)
    )
    assert run.outcomes[0].value == 3 and counted == Counter(built=1)


@pytest.mark.parametrize("backend", ["bubblewrap", "unshare", "rlimit"])
def test_a_candidate_cannot_change_the_shared_builds(make_pool: Any, backend: str) -> None:
    """An honest candidate and a test program are built and shared; then a hostile
    candidate tries to overwrite or remove every file where shared builds lie, or once
    lay. The honest candidate's next jobs still run what was built, with the right
    verdicts."""
    pool: SandboxPool = make_pool(backend)
    go = get_language("go")
    honest = unique(ADD["go"], "go")
    test = unique(ADD_TEST, "go")
    assert add(pool, "go", honest).outcomes[0].value == 3
    assert pool.run_test_program(go, honest, test, "Add", 60, prompt=ADD_PROMPT).passed
    places = (toolchains.SANDBOX_PREBUILT, toolchains.cache_root(), shared_builds.BUILDS.staging_folder())
    roots = ", ".join(f'"{root}"' for root in places)
    hostile = unique(TAMPER % roots, "go")
    assert add(pool, "go", hostile).outcomes[0].value == 0  # nothing could be written
    attacked = pool.run_test_program(go, hostile, test, "Add", 60, prompt=ADD_PROMPT)
    assert not attacked.passed and "actual  : 0" in attacked.verdict["message"], attacked.verdict
    (run, program), counted = stats_after(
        lambda: (
            add(pool, "go", honest),
            pool.run_test_program(go, honest, test, "Add", 60, prompt=ADD_PROMPT),
        )
    )
    assert run.outcomes[0].value == 3 and run.compiles == 0
    assert program.passed, program.verdict
    assert counted == Counter(reused=3)  # the candidate twice, the test program once


def test_a_shared_build_changed_on_the_host_is_not_run(make_pool: Any) -> None:
    """If a shared build changed after it was built (anyone with write access to the
    parent's staging folder), its digest no longer matches: the job compiles afresh and
    is right."""
    pool: SandboxPool = make_pool("bubblewrap")
    code = unique(ADD["cpp"], "cpp")
    assert add(pool, "cpp", code).compiles == 1
    entry = list(shared_builds.BUILDS.entries.values())[-1]
    assert entry.path is not None
    with open(entry.path, "r+b") as handle:
        handle.seek(os.path.getsize(entry.path) // 2)
        handle.write(b"\xcc" * 64)  # int3 in the program (or its tar): a build that would crash
    run = add(pool, "cpp", code)
    assert run.outcomes[0].value == 3 and run.compiles == 1
    assert entry not in shared_builds.BUILDS.entries.values()  # dropped: the next job builds it again
    assert not os.path.exists(entry.path)
    runs, counted = stats_after(lambda: [add(pool, "cpp", code) for _ in range(2)])
    assert [r.compiles for r in runs] == [1, 0] and counted == Counter(built=1, reused=1)


@pytest.mark.parametrize("language", ["go", "cpp"])
def test_no_shared_build_holds_a_test_programs_expected_values(make_pool: Any, language: str) -> None:
    """pass@k's candidates share their identical builds, and the test program's build is
    shared too, but none lies where a sandbox can read it: nothing under the toolchain
    cache (which every sandbox reads) holds the expected values, and the staging folder
    that does is the parent's alone (0700, outside every sandbox)."""
    pool: SandboxPool = make_pool("bubblewrap", workers=2)
    lang = get_language(language)
    secret = f"EXPECTED-{uuid.uuid4().hex}"  # in the test program only, source and binary
    if language == "go":
        prompt, entry = ADD_PROMPT, "Add"
        test = f'func TestAdd(t *testing.T) {{\n\tassert.Equal(t, 3, Add(1, 2), "{secret}")\n}}\n'
        good, wrong = prompt + "\treturn a + b\n}\n", prompt + "\treturn a - b\n}\n"
    else:
        prompt, entry = "int Add(int a, int b) {\n", "Add"
        test = f'#include <cassert>\nint main() {{\n    assert(Add(1, 2) == 3 && "{secret}");\n}}\n'
        good, wrong = prompt + "    return a + b;\n}\n", prompt + "    return a - b;\n}\n"

    def run_all() -> list[bool]:
        return [
            pool.run_test_program(lang, c, test, entry, 60, prompt=prompt).passed for c in (good, wrong, good)
        ]

    good, wrong = unique(good, language), unique(wrong, language)
    began = time.time() - 1
    verdicts, counted = stats_after(run_all)
    assert verdicts == [True, False, True]
    # the candidates: two builds, one reused; the test program: built once, reused twice
    assert counted == Counter(built=3, reused=3), counted
    assert _holding(toolchains.cache_root(), secret, began) == []
    staging = shared_builds.BUILDS.staging_folder()
    assert len(_holding(staging, secret, began)) == 1  # the test program's export, kept
    assert os.stat(staging).st_mode & 0o777 == 0o700
    assert not staging.startswith(toolchains.cache_root() + os.sep)


def test_a_killed_process_staging_folder_is_removed_by_the_next(tmp_path: Any) -> None:
    """A process killed before its exit leaves its staging folder: the next process to
    share a build removes it, and leaves a living process's, and other names, alone."""
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    names = [f"assay-builds-{int(dead.stdout)}-x", f"assay-builds-{os.getpid()}-y", "assay-builds-other"]
    for name in names:
        (tmp_path / name).mkdir(mode=0o700)
        (tmp_path / name / "staging-1").write_bytes(b"build")
    shared_builds.remove_dead_folders(str(tmp_path), shared_builds.STAGING_PREFIX)
    assert sorted(os.listdir(tmp_path)) == sorted(names[1:])


def _holding(root: str, secret: str, since: float) -> list[str]:
    """The files under ``root`` changed since ``since`` that hold ``secret``."""
    paths = (os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names)
    return [path for path in paths if _changed_since(path, since) and secret.encode() in _read(path)]


def _changed_since(path: str, since: float) -> bool:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return False  # removed meanwhile (another process shares the cache)
    return stat.S_ISREG(status.st_mode) and status.st_ctime >= since


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return b""


def test_a_staging_folder_removed_from_outside_means_compiling_unshared(make_pool: Any) -> None:
    """Someone removed the staging folder (a sweep of a process in another PID
    namespace that took ours for dead): jobs still run, each compiling its own build."""
    pool: SandboxPool = make_pool("bubblewrap")
    code = unique(ADD["cpp"], "cpp")
    staging = shared_builds.BUILDS.staging_folder()
    os.rename(staging, staging + "-away")
    try:
        runs, counted = stats_after(lambda: [add(pool, "cpp", code) for _ in range(2)])
    finally:
        os.rename(staging + "-away", staging)
    assert [[o.value for o in run.outcomes] for run in runs] == [[3], [3]]
    assert [run.compiles for run in runs] == [1, 1] and counted == Counter()
