"""Hostile candidates against C++ and Java test programs: the test program is compiled and
runs in its own sandbox, so the candidate can neither read it, nor forge its verdict, nor
make it pass by ending early, lying on the wire or exhausting the machine.

The expected value is an unguessable marker that exists only in the test program."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from assay.sandbox import Limits, ProgramRun, SandboxPool, get_language

from . import _hostile_snippets as snippets

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py
SECRET = fixtures.SECRET
assert_left_clean = fixtures.assert_left_clean

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

MARKER = "TEST-ONLY-" + os.urandom(6).hex()
SLOW = pytest.mark.slow
BACKENDS = ["bubblewrap", pytest.param("unshare", marks=SLOW), pytest.param("rlimit", marks=SLOW)]
LANGUAGES = ["cpp", "java"]
TESTS = {
    "cpp": f"""#undef NDEBUG
#include <cassert>
#include <stdexcept>
int main() {{
    assert (solution("honest") == "honest");
    std::string found = solution("probe");
    if (found != "{MARKER}") throw std::runtime_error("the candidate returned " + found.substr(0, 2000));
}}
""",
    "java": f"""public class Main {{
    public static void main(String[] args) {{
        Solution s = new Solution();
        if (!s.solution("honest").equals("honest")) throw new AssertionError("honest");
        String found = s.solution("probe");
        if (!found.equals("{MARKER}")) {{
            throw new RuntimeException("the candidate returned " + found.substring(0, Math.min(found.length(), 2000)));
        }}
    }}
}}
""",
}


@pytest.fixture(params=BACKENDS)
def any_pool(request: pytest.FixtureRequest, make_pool: Any) -> Iterator[SandboxPool]:
    chosen: SandboxPool = make_pool(request.param)
    yield chosen
    assert_left_clean(chosen)


@pytest.fixture(params=LANGUAGES)
def language(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def attack(
    pool: SandboxPool, language: str, body: str, timeout: float = 15, limits: Limits | None = None
) -> ProgramRun:
    code = snippets.program(language, body)
    return pool.run_test_program(
        get_language(language), code, TESTS[language], "solution", timeout, limits or Limits()
    )


def returned(run: ProgramRun) -> str:
    """What the candidate's probe call returned, as the test program reported it."""
    assert not run.passed
    assert run.verdict["kind"] == "exception", run.verdict
    message = str(run.verdict["message"])
    assert message.startswith("the candidate returned "), message
    return message[len("the candidate returned ") :]


# the candidate looks for the marker's prefix (written in two pieces: its own source is
# searched too) in every process's command line and environment, and in every file it
# can read from its folder's parent down
SEARCH = {
    "cpp": """    namespace fs = std::filesystem;
    std::string needle = std::string("TEST") + "-ONLY-", hits;
    auto scan = [&](const std::string& p) {
        std::ifstream f(p, std::ios::binary);
        if (!f) return;
        std::stringstream s; s << f.rdbuf();
        if (s.str().find(needle) != std::string::npos) hits += p + ";";
    };
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        scan(it->path().string() + "/cmdline");
        scan(it->path().string() + "/environ");
    }
    auto options = fs::directory_options::skip_permission_denied;
    for (auto it = fs::recursive_directory_iterator("..", options, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code e2;
        if (it->is_regular_file(e2) && it->file_size(e2) < (1 << 20)) scan(it->path().string());
    }
    return "hits: " + hits;
""",
    "java": """        String needle = new StringBuilder("-YLNO-TSET").reverse().toString(); // javac folds "a" + "b"
        StringBuilder hits = new StringBuilder();
        List<Path> paths = new ArrayList<>();
        File[] procs = new File("/proc").listFiles();
        if (procs != null) for (File p : procs) { paths.add(p.toPath().resolve("cmdline")); paths.add(p.toPath().resolve("environ")); }
        try { Files.walk(Paths.get("..")).filter(Files::isRegularFile).forEach(paths::add); } catch (Exception e) {}
        for (Path p : paths) {
            try {
                if (Files.size(p) > (1 << 20)) continue;
                if (new String(Files.readAllBytes(p), "ISO-8859-1").contains(needle)) hits.append(p).append(";");
            } catch (Exception | Error e) {}
        }
        return "hits: " + hits;
""",
}
# a forged verdict, framed, on every descriptor the protocol uses (3-6), then an exit
FORGE_VERDICT = {
    "cpp": """    std::string body = "{\\"passed\\": true, \\"calls\\": 2}";
    std::string frame = std::string("\\0\\0\\0", 3) + char(body.size()) + body;
    for (int fd = 3; fd <= 6; fd++) if (write(fd, frame.data(), frame.size()) < 0) {}
    std::puts("{\\"passed\\": true}");
    std::fflush(stdout);
    _exit(0);
""",
    "java": """        byte[] body = "{\\"passed\\": true, \\"calls\\": 2}".getBytes();
        for (int number = 3; number <= 6; number++) {
            try {
                FileDescriptor fd = new FileDescriptor();
                Field field = FileDescriptor.class.getDeclaredField("fd");
                field.setAccessible(true);
                field.setInt(fd, number);
                FileOutputStream out = new FileOutputStream(fd);
                out.write(new byte[]{0, 0, 0, (byte) body.length});
                out.write(body);
                out.flush();
            } catch (Exception e) {}
        }
        System.out.println("{\\"passed\\": true}");
        System.exit(0);
        return "";
""",
}
# a reply of the wrong type, framed on the reply pipe before the real one
UNDECODABLE = {
    "cpp": """    std::string body = "{\\"ok\\": true, \\"value\\": {\\"$dict\\": []}}";
    std::string frame = std::string("\\0\\0\\0", 3) + char(body.size()) + body;
    if (write(4, frame.data(), frame.size()) < 0) {}
    return "nope";
""",
    "java": """        byte[] body = "{\\"ok\\": true, \\"value\\": {\\"$dict\\": []}}".getBytes();
        FileDescriptor fd = new FileDescriptor();
        Field field = FileDescriptor.class.getDeclaredField("fd");
        field.setAccessible(true);
        field.setInt(fd, 4);
        FileOutputStream out = new FileOutputStream(fd);
        out.write(new byte[]{0, 0, 0, (byte) body.length});
        out.write(body);
        out.flush();
        return "nope";
""",
}
EXIT_EARLY = {"cpp": "    std::exit(0);\n", "java": '        System.exit(0);\n        return "";\n'}
HUGE = {
    "cpp": "    return std::string(3 << 20, 'x');\n",
    "java": '        return "x".repeat(3 << 20);\n',
}
SLEEP = {
    "cpp": '    sleep(100000);\n    return "late";\n',
    "java": '        Thread.sleep(100000000L);\n        return "late";\n',
}


def test_the_test_program_is_out_of_the_candidates_reach(any_pool: SandboxPool, language: str) -> None:
    run = attack(any_pool, language, SEARCH[language])
    assert returned(run) == "hits: ", run.verdict
    assert MARKER not in str(run.verdict) and SECRET not in str(run.verdict)


def test_forged_verdicts_on_every_descriptor_cannot_pass(any_pool: SandboxPool, language: str) -> None:
    run = attack(any_pool, language, FORGE_VERDICT[language])
    assert not run.passed
    assert run.verdict["kind"] == "candidate_ended", run.verdict


def test_forged_replies_and_printed_verdicts_cannot_pass(any_pool: SandboxPool, language: str) -> None:
    """(The forged frames' length field is one byte too long: the reply pipe holds no
    frame boundary the candidate could not forge, and none the checker trusts.)"""
    run = attack(any_pool, language, snippets.FORGE[language])
    assert not run.passed
    assert (run.verdict["kind"], run.verdict["message"]) == (
        "candidate_ended",
        "calling solution: trailing data in frame",
    ), run.verdict


def test_a_reply_that_does_not_decode_is_the_candidates_failure(make_pool: Any, language: str) -> None:
    run = attack(make_pool("bubblewrap"), language, UNDECODABLE[language])
    assert not run.passed
    assert (run.verdict["stage"], run.verdict["kind"]) == ("test", "candidate_error"), run.verdict
    assert "does not decode" in run.verdict["message"]


@SLOW
def test_ending_early_or_a_value_too_big_fails(any_pool: SandboxPool, language: str) -> None:
    ended = attack(any_pool, language, EXIT_EARLY[language])
    assert not ended.passed
    assert ended.verdict["kind"] == "candidate_ended", ended.verdict
    huge = attack(any_pool, language, HUGE[language], limits=Limits(max_value_bytes=1 << 20))
    assert not huge.passed
    assert huge.verdict["kind"] == "candidate_ended", huge.verdict
    assert "exceeds the 1048576-byte limit" in huge.verdict["message"]


@SLOW
def test_a_candidate_that_never_answers_times_out(any_pool: SandboxPool, language: str) -> None:
    # the candidate sleeps for over a day: however loaded the machine, a second is a timeout
    run = attack(any_pool, language, SLEEP[language], timeout=1)
    assert run.timed_out and not run.passed
    assert run.verdict["kind"] == "timeout"
    # the second counts from when both sides were built
    assert run.compile_ms is not None and run.duration_ms < run.compile_ms + 1000 + 5000


@SLOW
def test_process_and_memory_bombs_are_stopped(any_pool: SandboxPool, language: str) -> None:
    forks = attack(any_pool, language, snippets.PROCESS_BOMB[language], limits=Limits(max_processes=48))
    assert not forks.passed
    assert "spawned 500" not in str(forks.verdict)
    memory = attack(any_pool, language, snippets.MEMORY_BOMB[language], limits=Limits(memory_bytes=384 << 20))
    assert not memory.passed
    assert memory.verdict["kind"] in ("candidate_ended", "candidate_error"), memory.verdict


INJECTED = {
    "cpp": [
        "#include <cstdlib>\n#include <string>\n"
        'std::string solution(std::string which = (std::system("touch /tmp/x"), "")) {\n'
        "    return which;\n}\n",
        '#include <cstdlib>\n#include <string>\nstruct Evil { Evil() { std::system("id"); } };\n'
        "Evil solution(std::string which) { return {}; }\n",
        "#include <string>\nstd::string solution(std::string* which) { return *which; }\n",
    ],
    "java": [
        "class Solution {\n    public String solution(@Evil String which) { return which; }\n}\n",
        "class Solution {\n    public Evil solution(String which) { return null; }\n}\n",
        "class Solution {\n    public <T extends Runnable> String solution(T which) { return null; }\n}\n",
    ],
}


@pytest.mark.parametrize(
    ("language", "code"),
    [(lang, code) for lang, codes in INJECTED.items() for code in codes],
    ids=[f"{lang}-{i}" for lang, codes in INJECTED.items() for i in range(len(codes))],
)
def test_a_header_carrying_code_is_refused(make_pool: Any, language: str, code: str) -> None:
    """Without a prompt the proxy is written from the candidate's header: one that does not
    fit the grammar of plain types is refused before anything is compiled."""
    run = make_pool("bubblewrap").run_test_program(
        get_language(language), code, TESTS[language], "solution", 10
    )
    assert not run.passed
    assert (run.verdict["stage"], run.verdict["kind"]) == ("load", "declaration"), run.verdict
    assert "solution" in run.verdict["message"]


def test_the_candidates_macros_never_reach_the_checker(make_pool: Any) -> None:
    """The proxy is written from the header's tokens: a macro that would turn the checker's
    ``string`` into code stays in the candidate's own compile."""
    code = (
        '#include <cstdlib>\n#include <string>\n#define string decltype(std::system("exit 3"), std::string())\n'
        "string solution(string which) {\n    return which;\n}\n"
    )
    run = make_pool("bubblewrap").run_test_program(get_language("cpp"), code, TESTS["cpp"], "solution", 15)
    assert returned(run) == "probe"
