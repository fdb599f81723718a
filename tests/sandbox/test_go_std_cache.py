"""The Go build cache of standard packages (``_toolchains._build_go_cache``): built once by
the parent under the compile step's settings, so that a job whose candidate imports
``net`` or ``os/user`` (which Go ships compiled for cgo only) compiles only its own code;
read-only to every job, which can neither change nor add an entry."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
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

GO = get_language("go")
# a candidate importing what Go ships compiled for cgo only (net, os/user, crypto/sha1)
USES_NET = """package main

import (
	"crypto/sha1"
	"fmt"
	"net"
	"os/user"
)

var _, _ = net.Dial, user.Current

func Digest(text string) string {
	return fmt.Sprintf("%x", sha1.Sum([]byte(text)))
}
"""
ABC_SHA1 = "a9993e364706816aba3e25717850c26c9cd0d89d"
# in every folder of every Go cache the sandbox can see: a new entry planted; every file
# opened for writing, made writable, removed. The number of those that worked, and of the
# paths seen (so that it cannot pass by not finding the cache).
PLANT = """package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func Digest(text string) string {
	done, seen := 0, 0
	for _, root := range []string{%s} {
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil || !strings.Contains(p, "/go-") {
				return nil
			}
			seen++
			if info.IsDir() {
				if os.WriteFile(filepath.Join(p, "ff00-a"), []byte("planted"), 0o644) == nil {
					done++
				}
				return nil
			}
			if f, e := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); e == nil {
				f.Close()
				done++
			}
			if os.Chmod(p, 0o666) == nil || os.Remove(p) == nil {
				done++
			}
			return nil
		})
	}
	return fmt.Sprint(done, " ", seen)
}
"""


def go_cache() -> Path:
    toolchains.prepare("go")
    options = toolchains.compile_options(None, "")  # as the rlimit backend sees it: in place
    cache = json.loads(options)["go_cache"]
    assert cache, "a Go toolchain is installed, so the parent builds the cache"
    return Path(cache)


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns, path.stat().st_mode)
        for path in sorted(root.rglob("*"))
    }


def test_a_jobs_build_finds_the_standard_packages_compiled_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Go itself says what it compiles (``-x``): with the compile step's own settings
    (harness/build.py) and the prebuilt cache, only the candidate's package, not ``net``.
    (Go here runs as the cache's owner, outside a sandbox: on a copy, which it may write.)"""
    cache = go_cache()
    monkeypatch.chdir(tmp_path)
    env = build._go_env({"go_cache": str(cache)})
    assert env["GOCACHE"] == str(cache)
    shared = toolchains.go_environment(str(cache), env["GOPATH"])
    assert {name: env[name] for name in shared} == shared  # the parent built it as jobs build
    env["GOCACHE"] = str(shutil.copytree(cache, tmp_path / "cache"))
    (tmp_path / "solution.go").write_text(USES_NET + "\nfunc main() {}\n")
    go = toolchains.tool("go")
    assert go is not None
    done = subprocess.run([go, "build", "-x", "-o", "program", "solution.go"], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stderr.decode().splitlines()
    compiled = [line.split(" -p ")[1].split()[0] for line in lines if "/compile " in line and " -p " in line]
    assert compiled == ["main"], compiled


@pytest.mark.parametrize("backend", fixtures.BACKENDS)
def test_a_candidate_can_neither_plant_nor_change_an_entry_of_the_go_cache(
    make_pool: Any, backend: str
) -> None:
    pool: SandboxPool = make_pool(backend)
    cache = go_cache()
    before = snapshot(cache)
    assert len(before) > 100  # Go's 256 folders and the entries
    roots = ", ".join(f'"{root}"' for root in (toolchains.SANDBOX_PREBUILT, toolchains.cache_root()))
    hostile = PLANT % roots + f"\n// {uuid.uuid4().hex}\n"  # built here, not reused
    run = pool.run_function(GO, hostile, "Digest", [Call(("abc",))], timeout=60)
    assert run.load_failure is None, run.load_failure
    assert run.outcomes[0].ok, run.outcomes[0]
    done, seen = map(int, run.outcomes[0].value.split())
    assert done == 0 and seen >= len(before), (done, seen)  # it saw the cache, nothing worked
    honest = USES_NET + f"\n// {uuid.uuid4().hex}\n"
    run = pool.run_function(GO, honest, "Digest", [Call(("abc",))], timeout=60)
    assert run.outcomes[0].value == ABC_SHA1, (run.load_failure, run.outcomes)
    assert snapshot(cache) == before  # neither job nor its build wrote there
    fixtures.assert_left_clean(pool)
