"""Shared builds when something goes wrong around them (found by review): a compile that a
limit or the machine failed is not an error later jobs inherit, a folder name anyone can
make in /tmp never fails a job, a build that no longer opens is built again, and a pool
whose sandboxes could read the parent's staging folder shares nothing."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assay.sandbox import Limits, SandboxPool
from assay.sandbox import _shared_builds as shared_builds
from assay.sandbox.harness import build


def fake_compiler(tmp_path: Path, says: str, exit_code: int = 1) -> str:
    """A compiler driver that lost its child as g++ and go report it: a plain exit code."""
    script = tmp_path / "cc"
    script.write_text(f"#!/bin/sh\necho '{says}' >&2\nexit {exit_code}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.mark.parametrize(
    "says",
    [
        "x86_64-linux-gnu-g++-12: fatal error: Killed signal terminated program cc1plus",
        "g++: internal compiler error: CPU time limit exceeded signal terminated program cc1plus",
        "compile: signal: killed",
        "cc1plus: out of memory allocating 65536 bytes",
        "java.lang.OutOfMemoryError: Java heap space",
        "fatal error: error writing to /tmp/ccX.s: No space left on device",
    ],
)
def test_a_compiler_that_lost_its_child_is_not_an_error_to_share(tmp_path: Path, says: str) -> None:
    with pytest.raises(build.CompileFailed) as failed:
        build.compile_with([fake_compiler(tmp_path, says)], dict(os.environ))
    assert failed.value.signaled, says


def test_a_refusal_of_the_sources_is_shared(tmp_path: Path) -> None:
    says = "solution.cpp:3:5: error: 'foo' was not declared in this scope"
    with pytest.raises(build.CompileFailed) as failed:
        build.compile_with([fake_compiler(tmp_path, says)], dict(os.environ))
    assert not failed.value.signaled


@pytest.mark.parametrize("name", ["assay-builds-99999999999999999999-x", "assay-builds-\u00b2-x"])
def test_a_folder_name_anyone_can_make_is_left_alone_and_fails_nothing(tmp_path: Path, name: str) -> None:
    (tmp_path / name).mkdir()
    shared_builds.remove_dead_folders(str(tmp_path), shared_builds.STAGING_PREFIX)
    assert os.listdir(tmp_path) == [name]


def test_a_build_that_no_longer_opens_is_built_again(tmp_path: Path) -> None:
    builds = shared_builds.SharedBuilds()
    gone = shared_builds.Entry(str(tmp_path / "removed-by-a-cleaner"), "00", size=1)
    builds.entries["k"] = gone
    with builds.claim("k") as claim:
        assert claim is not None and claim.descriptor() is None
    assert "k" not in builds.entries
    with builds.claim("k") as claim:
        assert claim is not None and claim.building  # this job's build is shared next
    assert builds.stats["reused"] == 0 and builds.stats["vanished"] == 1


def test_a_cached_compile_error_counts_toward_the_limit(tmp_path: Path) -> None:
    builds = shared_builds.SharedBuilds()
    payload = build.shared_build.FAILED + b'{"message": "' + b"x" * 100_000 + b'"}'
    export = tmp_path / "export"
    export.write_bytes(payload + hashlib.sha256(payload).digest())
    entry = builds.read_export(str(export))
    assert entry is not None and entry.error is not None and entry.size > 100_000


def test_nothing_is_shared_where_sandboxes_could_read_the_parents_folder() -> None:
    """rlimit as a plain user: the sandbox runs as our uid, which reads our 0700 folder."""
    readable = SimpleNamespace(builds_private=False, backend=SimpleNamespace(name="rlimit"))
    private = SimpleNamespace(builds_private=True, backend=SimpleNamespace(name="rlimit"))
    assert shared_builds.key("cpp", "checker", readable, Limits(), "test") is None
    assert shared_builds.key("cpp", "checker", private, Limits(), "test") is not None


@pytest.mark.parametrize("backend", ["bubblewrap", "rlimit"])
def test_pools_say_whether_their_sandboxes_are_kept_from_the_parents_files(
    make_pool: Any, backend: str
) -> None:
    pool: SandboxPool = make_pool(backend)
    own_view = pool.describe()["protections"]["filesystem_isolation"]
    another_uid = "dedicated" in pool.describe()["user"]
    assert pool.builds_private == (own_view or another_uid)
    if backend == "bubblewrap" or os.geteuid() == 0:
        assert pool.builds_private  # its own file system, or a dedicated uid as root
