"""The C++ harness's prebuilt objects (``_toolchains.CPP_UNITS``): assay.cpp and
assay_checker.cpp, compiled once by the parent beside the precompiled header, their
digest recorded before their name, and linked into each job only when the file still
hashes to it (else the job compiles the source). A candidate cannot replace their code
by defining the same functions: the link refuses two definitions."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.sandbox import Call, SandboxPool, get_language
from assay.sandbox import _toolchains as toolchains
from assay.sandbox.harness import build

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py

pytestmark = [
    pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning"),
    pytest.mark.toolchains,
]

CPP = get_language("cpp")
TOTAL = "#include <vector>\nlong long total(std::vector<int> v) {\n    long long s = 0;\n    for (int x : v) s += x;\n    return s;\n}\n"
TEST = "#undef NDEBUG\n#include <assert.h>\nint main() {\n    assert(total({1, 2, 3}) == 6);\n}\n"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A toolchain cache of the test's own, nothing prebuilt yet in this process."""
    monkeypatch.setenv("ASSAY_TOOLCHAIN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(toolchains, "_prebuilt", {})
    monkeypatch.setattr(toolchains, "_prepared", set())
    toolchains.cache_root.cache_clear()
    try:
        yield tmp_path / "cache"
    finally:
        toolchains.cache_root.cache_clear()


def prepared() -> dict[str, str]:
    toolchains._prebuilt.clear()  # as a new process would
    toolchains._prepared.clear()
    toolchains.prepare("cpp")
    options: dict[str, str] = json.loads(toolchains.compile_options(None, ""))
    return options


def test_the_parent_builds_each_object_once_with_its_digest_beside_it(own_cache: Path) -> None:
    options = prepared()
    for unit in toolchains.CPP_UNITS:
        built = Path(options[f"cpp_{unit}_o"])
        assert built.parent == Path(options["cpp_header"]).parent, built
        assert built.stat().st_mode & 0o777 == 0o644
        digest = sha256(built)
        assert options[f"cpp_{unit}_o_sha256"] == digest == built.with_suffix(".o.sha256").read_text()
        assert build.cpp_harness_code(options, unit) == [str(built)]
    first = {unit: os.stat(options[f"cpp_{unit}_o"]).st_ino for unit in toolchains.CPP_UNITS}
    again = prepared()  # a later process finds them whole: not built again
    assert {unit: os.stat(again[f"cpp_{unit}_o"]).st_ino for unit in toolchains.CPP_UNITS} == first


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache with every C++ part built, for tests that damage one part of a copy."""
    cache = tmp_path_factory.mktemp("built") / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ASSAY_TOOLCHAIN_CACHE", str(cache))
        patch.setattr(toolchains, "_prebuilt", {})
        patch.setattr(toolchains, "_prepared", set())
        toolchains.cache_root.cache_clear()
        try:
            toolchains.prepare("cpp")
        finally:
            toolchains.cache_root.cache_clear()
    return cache


def _copy_of(cache: Path, into: Path) -> None:
    """``cache`` copied to ``into``: its precompiled headers linked (read only, and large),
    every other file copied (a test damages those in place)."""

    def link_or_copy(source: str, target: str) -> object:
        return os.link(source, target) if source.endswith(".gch") else shutil.copy2(source, target)

    shutil.copytree(cache, into, copy_function=link_or_copy)


@pytest.mark.parametrize(
    "damage",
    ["truncated", "garbled", "digest_lost", "object_lost"],
)
def test_an_object_that_no_longer_hashes_to_its_digest_is_built_again(
    own_cache: Path, built_cache: Path, damage: str
) -> None:
    """(A crash before the disk had it, a truncation.) The next process rebuilds it."""
    _copy_of(built_cache, own_cache)
    built = Path(prepared()["cpp_assay_o"])
    whole = built.read_bytes()
    if damage == "truncated":
        built.write_bytes(whole[: len(whole) // 2])
    elif damage == "garbled":
        built.write_bytes(whole[:100] + bytes([whole[100] ^ 0xFF]) + whole[101:])
    elif damage == "digest_lost":
        built.with_suffix(".o.sha256").unlink()
    else:
        built.unlink()
    options = prepared()
    assert Path(options["cpp_assay_o"]).read_bytes() == whole
    assert options["cpp_assay_o_sha256"] == sha256(built) == built.with_suffix(".o.sha256").read_text()


def test_a_job_links_an_object_only_when_it_hashes_to_the_recorded_digest(tmp_path: Path) -> None:
    made = tmp_path / "assay.o"
    made.write_bytes(b"\x7fELF an object")
    source = str(Path(build.HERE) / "cpp" / "assay.cpp")
    whole = {"cpp_assay_o": str(made), "cpp_assay_o_sha256": sha256(made)}
    assert build.cpp_harness_code(whole, "assay") == [str(made)]
    assert build.cpp_harness_code({**whole, "cpp_assay_o_sha256": "0" * 64}, "assay") == [source]
    assert build.cpp_harness_code({**whole, "cpp_assay_o_sha256": ""}, "assay") == [source]
    assert build.cpp_harness_code({}, "assay") == [source]
    made.write_bytes(b"\x7fELF an obj")  # cut short after the digest was taken
    assert build.cpp_harness_code(whole, "assay") == [source]
    made.unlink()
    assert build.cpp_harness_code(whole, "assay") == [source]


@pytest.fixture
def garbled_objects(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The jobs are handed objects garbled after their digests were taken (files of the
    test's own, in the cache the sandboxes see): they must leave them out."""
    toolchains.prepare("cpp")
    made = []
    for unit in toolchains.CPP_UNITS:
        relative = toolchains._prebuilt[f"cpp_{unit}_o"]
        assert relative, "the objects were prebuilt"
        garbled = Path(toolchains.cache_root(), relative).with_name(f"garbled-{uuid.uuid4().hex}.o")
        garbled.write_bytes(b"\x7fELF not an object at all")
        garbled.chmod(0o644)
        made.append(garbled)
        monkeypatch.setitem(
            toolchains._prebuilt, f"cpp_{unit}_o", str(garbled.relative_to(toolchains.cache_root()))
        )
    try:
        yield
    finally:
        for path in made:
            path.unlink()


@pytest.mark.parametrize("backend", fixtures.BACKENDS)
def test_jobs_handed_a_garbled_object_compile_the_harness_themselves(
    make_pool: Any, backend: str, garbled_objects: None
) -> None:
    pool: SandboxPool = make_pool(backend)
    unique = f"// {uuid.uuid4().hex}\n"  # no build of another test to share
    done = pool.run_function(CPP, TOTAL + unique, "total", [Call(([1, 2, 3],))], timeout=120)
    assert done.load_failure is None, done.load_failure
    assert done.outcomes[0].value == 6, done.outcomes[0]
    ran = pool.run_test_program(CPP, TOTAL + unique, TEST + unique, "total", timeout=120)
    assert ran.passed, ran.verdict


# a definition of a function the prebuilt object defines: the link refuses the second one
REDEFINES = {
    "read_frame": "namespace assay { bool read_frame(Json& frame) { frame = Json(); return false; } }\n",
    "timed": "namespace assay { Json timed(Call& call, Json& spent) { call.run(); return call.value(); } }\n",
    "send_frame": "namespace assay { bool send_frame(int, const Json&) { return true; } }\n",
}


@pytest.mark.parametrize("name", sorted(REDEFINES))
@pytest.mark.parametrize("backend", fixtures.ISOLATING)
def test_a_candidate_defining_a_harness_function_does_not_link(
    make_pool: Any, backend: str, name: str
) -> None:
    pool: SandboxPool = make_pool(backend)
    done = pool.run_function(CPP, TOTAL + REDEFINES[name], "total", [Call(([1, 2, 3],))], timeout=120)
    failure = done.load_failure
    assert failure is not None and failure.kind == "compile", (failure, done.outcomes)
    assert f"multiple definition of `assay::{name}(" in failure.message, failure.message


def test_a_test_program_defining_a_checker_function_does_not_link(make_pool: Any) -> None:
    pool: SandboxPool = make_pool("bubblewrap")
    forged = "namespace assay { namespace checker { void add_time(const Json&) {} } }\n" + TEST
    ran = pool.run_test_program(CPP, TOTAL, forged, "total", timeout=120)
    assert not ran.passed and ran.verdict["kind"] == "test_compile", ran.verdict
    assert "multiple definition of `assay::checker::add_time(" in ran.verdict["message"], ran.verdict


def test_compile_errors_still_name_the_candidates_file_and_line(make_pool: Any) -> None:
    pool: SandboxPool = make_pool("bubblewrap")
    broken = "int total(int x) {\n    return x +;\n}\n"
    done = pool.run_function(CPP, broken, "total", [Call((1,))], timeout=120)
    assert done.load_failure is not None and "solution.cpp:2:" in done.load_failure.message, done.load_failure


# macros that would break the harness's frames and clock, were they to reach its code
MACROS = "#define write(...) 0\n#define read(...) 0\n#define clock_gettime(...) 0\n#define Json int\n"


@pytest.mark.parametrize("objects", ["prebuilt", "compiled in the job"])
def test_a_candidates_macros_do_not_reach_the_harness_code(
    make_pool: Any, objects: str, request: pytest.FixtureRequest
) -> None:
    if objects != "prebuilt":
        request.getfixturevalue("garbled_objects")
    pool: SandboxPool = make_pool("bubblewrap")
    code = MACROS + TOTAL + f"// {uuid.uuid4().hex}\n"
    done = pool.run_function(CPP, code, "total", [Call(([1, 2, 3],))], timeout=120)
    assert done.load_failure is None, done.load_failure
    assert done.outcomes[0].value == 6 and done.outcomes[0].wall_ms is not None, done.outcomes[0]


def test_a_job_that_prepares_while_another_builds_waits_for_every_part(own_cache: Path) -> None:
    """Two jobs' threads on a cold cache: the second returns only once the first has built
    every part (it returned once the header was there, before the objects, and its jobs
    compiled the harness's source themselves, under another shared-build key)."""
    building, second_returned = threading.Event(), threading.Event()
    build_stdcxx = toolchains._build_cpp_stdcxx_header

    def held_stdcxx() -> str:  # the header is built; the second job asks now
        building.set()
        second_returned.wait(1)  # a second that waits on the first's lock never comes
        return build_stdcxx()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(toolchains, "_build_cpp_stdcxx_header", held_stdcxx)
        first = threading.Thread(target=toolchains.prepare, args=("cpp",))
        first.start()
        assert building.wait(300)
        toolchains.prepare("cpp")  # the second job's thread
        second_returned.set()
        seen = json.loads(toolchains.compile_options(None, ""))
        first.join()
    assert seen["cpp_header_stdcxx"] and all(seen[f"cpp_{unit}_o_sha256"] for unit in toolchains.CPP_UNITS)
