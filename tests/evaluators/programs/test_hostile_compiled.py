"""Hostile compiled programs on every backend: the build and every test run in the
sandbox, so a native fork bomb, endless output or a search of the file system does no
better than its Python twin (``test_hostile``)."""

from __future__ import annotations

import pytest

from ._helpers import Judge
from .test_hostile import MARKER, assert_stopped_at_the_cpu_limit

pytestmark = [
    pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning"),
    pytest.mark.toolchains,
]

FORK_BOMB = """#include <iostream>
#include <unistd.h>
int main() { std::cout << 3 << std::endl; while (true) fork(); }
"""
ENDLESS = """#include <cstdio>
int main() { static char line[65536]; for (auto& c : line) c = 'y'; while (true) fwrite(line, 1, sizeof line, stdout); }
"""
SEARCH = r"""#include <dirent.h>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
std::set<std::string> found;
int budget = 5000;
void look(const std::string& path) {
    if (--budget < 0) return;
    std::ifstream in(path, std::ios::binary);
    std::string text(4 << 20, '\0');  // the first 4 MiB of each file
    in.read(&text[0], text.size());
    text.resize(in.gcount());
    const std::string head = std::string("EXP") + "ECTED-";
    for (size_t at = text.find(head); at != std::string::npos; at = text.find(head, at + 1)) {
        std::string tail = text.substr(at + head.size(), 12);
        if (tail.size() == 12 && tail.find_first_not_of("0123456789abcdef") == std::string::npos) found.insert(head + tail);
    }
}
void walk(const std::string& folder, int depth) {
    DIR* dir = opendir(folder.c_str());
    if (!dir || depth > 6) { if (dir) closedir(dir); return; }
    while (dirent* e = readdir(dir)) {
        std::string name = e->d_name, path = folder + "/" + name;
        if (name == "." || name == "..") continue;
        if (e->d_type == DT_DIR) walk(path, depth + 1); else if (e->d_type == DT_REG) look(path);
    }
    closedir(dir);
}
int main() {
    for (const char* top : {"/tmp", "/work", "/var/tmp", "/dev/shm", "..", "/opt"}) walk(top, 0);
    DIR* proc = opendir("/proc");
    while (dirent* e = proc ? readdir(proc) : nullptr)
        if (isdigit(e->d_name[0])) { look(std::string("/proc/") + e->d_name + "/cmdline"); look(std::string("/proc/") + e->d_name + "/environ"); }
    if (found.empty()) std::cout << "nothing\n";
    for (auto& f : found) std::cout << f << "\n";
}
"""


def test_a_native_fork_bomb_is_contained(judge: Judge) -> None:
    result = judge(FORK_BOMB, [{"input": "", "output": "3\n"}], language="cpp", time_limit=1)
    assert result.score == 0 and result.metadata["verdict"] in ("time_limit", "runtime_error"), result.comment
    assert_stopped_at_the_cpu_limit(result)
    assert judge("print(3)", [{"input": "", "output": "3\n"}]).score == 1


def test_native_endless_output_is_an_output_limit(judge: Judge) -> None:
    result = judge(ENDLESS, [{"input": "", "output": "3\n"}], language="cpp", output_limit_mb=16)
    assert result.metadata["verdict"] == "output_limit", result.comment


def test_a_native_search_finds_neither_answer_nor_checker(judge: Judge) -> None:
    from assay.evaluators import CheckerProgram

    from .test_hostile import CHECKER

    tests = [{"input": "", "output": MARKER + "\n"}]
    for checker in ("tokens", CheckerProgram("python", CHECKER)):
        result = judge(SEARCH, tests, language="cpp", checker=checker, time_limit=20)
        assert result.metadata["verdict"] == "wrong_answer", result.comment
        assert "nothing" in result.comment
