"""A compiled candidate is compiled once per job, whatever its calls do: one that exits
in every other call is started again for the next call from the binary already built
(recompiling held the slot 10-27 s for a Go candidate that exits in every call)."""

from __future__ import annotations

from typing import Any

import pytest

from assay.sandbox import Call, get_language

pytestmark = pytest.mark.slow

# Each call reports whether the binary running it is the one the first call saw (its
# modification time and size, noted in the job folder), then exits when asked to.
CANDIDATES = {
    "go": """package main

import (
    "fmt"
    "os"
)

func solution(exit bool) bool {
    exe, _ := os.Executable()
    info, _ := os.Stat(exe)
    stamp := fmt.Sprintf("%d/%d", info.ModTime().UnixNano(), info.Size())
    seen, err := os.ReadFile("first-binary")
    if err != nil {
        os.WriteFile("first-binary", []byte(stamp), 0o600)
        seen = []byte(stamp)
    }
    if exit {
        os.Exit(0)
    }
    return string(seen) == stamp
}
""",
    "cpp": """#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>

bool solution(bool exit_now) {
    struct stat info;
    stat("/proc/self/exe", &info);
    std::string stamp = std::to_string(info.st_mtim.tv_nsec) + "/" + std::to_string(info.st_mtim.tv_sec);
    std::string seen;
    std::ifstream in("first-binary");
    if (!std::getline(in, seen)) { std::ofstream("first-binary") << stamp; seen = stamp; }
    if (exit_now) std::exit(0);
    return seen == stamp;
}
""",
}


@pytest.mark.parametrize("language", sorted(CANDIDATES))
def test_a_candidate_that_exits_is_restarted_without_recompiling(make_pool: Any, language: str) -> None:
    calls = [Call((flag,)) for flag in (False, True, False, True, False, True, False)]
    run = make_pool("bubblewrap").run_function(
        get_language(language), CANDIDATES[language], "solution", calls, timeout=60
    )
    assert run.load_failure is None, run.load_failure
    statuses = [(o.status, o.value) for o in run.outcomes]
    assert statuses[0::2] == [("ok", True)] * 4, statuses  # the same binary after every restart
    assert [status for status, _ in statuses[1::2]] == ["crashed"] * 3, statuses
    assert run.restarts == 3
