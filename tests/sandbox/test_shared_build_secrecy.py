"""Shared builds reach only the jobs that build the same bytes in the same role
(``sandbox/_shared_builds.py``): a hostile candidate that searches every file it can
see finds neither a sibling candidate's build nor its test program's expected values,
while that test program's build is still shared between the jobs of its problem."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from typing import Any

import pytest

from assay.sandbox import SandboxPool, get_language
from assay.sandbox import _shared_builds as shared_builds

pytestmark = [
    pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning"),
    pytest.mark.slow,
    pytest.mark.toolchains,
]

PROMPT = "int Add(int a, int b) {\n"
# Every regular file changed since the test began (ctime, which no one can set back),
# under every folder but the system's, and every file another process holds open or
# runs from: the markers it finds (their prefixes split, so that it never finds itself).
SEARCH = r"""#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

static std::set<std::string> found;
static long files = 0;
static const char* SELF = "SELF-%(own)s";

static void look(const std::string& path) {
    struct stat info;
    if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_ctime < %(began)d) return;
    int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK);
    if (fd < 0) return;
    files++;
    std::string text;
    char block[1 << 16];
    for (ssize_t n; text.size() < (64u << 20) && (n = read(fd, block, sizeof block)) > 0;) text.append(block, n);
    close(fd);
    for (std::string head : {std::string("SIB") + "LING-", std::string("EXP") + "ECTED-", std::string("SE") + "LF-"}) {
        for (size_t at = text.find(head); at != std::string::npos; at = text.find(head, at + 1)) {
            std::string tail = text.substr(at + head.size(), 32);
            if (tail.size() == 32 && tail.find_first_not_of("0123456789abcdef") == std::string::npos) found.insert(head + tail);
        }
    }
}

static bool skipped(const std::string& path) {
    for (const char* system : {"/proc", "/sys", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/boot", "/var/lib", "/var/cache"})
        if (path == system) return true;
    const std::string name = path.substr(path.rfind('/') + 1);
    return name == ".git" || name == ".venv" || name == "node_modules" || name == "__pycache__" || name == "site-packages";
}

static void walk(const std::string& folder, int depth) {
    DIR* dir = depth < 24 ? opendir(folder.c_str()) : nullptr;
    if (!dir) return;
    while (dirent* e = readdir(dir)) {
        std::string name = e->d_name, path = (folder == "/" ? "" : folder) + "/" + name;
        if (name == "." || name == ".." || skipped(path)) continue;
        if (e->d_type == DT_DIR) walk(path, depth + 1);
        else if (e->d_type == DT_REG) look(path);
    }
    closedir(dir);
}

static void processes() {
    DIR* proc = opendir("/proc");
    while (dirent* e = proc ? readdir(proc) : nullptr) {
        if (!isdigit(e->d_name[0])) continue;
        std::string pid = std::string("/proc/") + e->d_name;
        for (const char* part : {"/cmdline", "/environ"}) look(pid + part);
        look(pid + "/exe");
        walk(pid + "/cwd", 20);
        DIR* fds = opendir((pid + "/fd").c_str());
        while (dirent* f = fds ? readdir(fds) : nullptr)
            if (f->d_name[0] != '.') look(pid + "/fd/" + f->d_name);
        if (fds) closedir(fds);
    }
    if (proc) closedir(proc);
}

int Add(int a, int b) {
    walk("/", 0);
    processes();
    printf("searched %%ld files\n", files);
    for (auto& f : found) if (f != SELF) printf("%%s\n", f.c_str());
    if (found.count(SELF)) printf("found itself\n");
    return a + b;
}
"""


def test_a_candidate_finds_no_other_build_nor_the_expected_values(make_pool: Any, backend: str) -> None:
    """pass@k on one problem: candidate A (its marker in source and binary) twice, then
    a hostile candidate B. B's search finds its own build (it can see a job's files) but
    not A's, nor the test program's secret; A's build and the test program's are each
    built once and reused."""
    pool: SandboxPool = make_pool(backend)
    cpp = get_language("cpp")
    sibling, secret, own = (uuid.uuid4().hex for _ in range(3))
    test = f'#include <cassert>\nint main() {{\n    assert(Add(1, 2) == 3 && "EXPECTED-{secret}");\n}}\n'
    honest = f'static const char* MARK = "SIBLING-{sibling}";\n{PROMPT}    return MARK[0] ? a + b : 0;\n}}\n'
    hostile = SEARCH % {"own": own, "began": int(time.time()) - 5}

    def run(code: str) -> Any:
        return pool.run_test_program(cpp, code, test, "Add", 120, prompt=PROMPT)

    before = Counter(shared_builds.BUILDS.stats)
    assert run(honest).passed and run(honest).passed
    searched = run(hostile)
    counted = Counter(shared_builds.BUILDS.stats) - before
    stdout = searched.output.stdout
    assert searched.passed, (searched.verdict, stdout, searched.output.stderr)
    assert "found itself" in stdout and "searched 0 files" not in stdout, stdout
    assert sibling not in stdout and secret not in stdout, stdout
    # A: built, reused; B: built; the test program: built once, reused twice
    assert counted == Counter(built=3, reused=3), counted


@pytest.fixture(params=["bubblewrap", "unshare", "rlimit"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
