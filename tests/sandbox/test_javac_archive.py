"""javac's class-data archive (``_toolchains._build_javac_archive``): dumped once by the
parent, read-only to every job, passed to each javac run of the compile step, and mapped
by the JDK view's javac (not silently refused, which would cost every compile its CPU)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from assay.sandbox import _toolchains as toolchains
from assay.sandbox.harness import build

pytestmark = [pytest.mark.toolchains]

OPTIONS = {"javac": "/jdk/bin/javac", "jvm_flags": "-XX:+UseSerialGC -Xmx64m"}


def test_each_javac_run_maps_the_archive_when_there_is_one() -> None:
    with_archive = build.javac_argv({**OPTIONS, "javac_archive": "/cache/javac.jsa"})
    assert with_archive[:4] == [
        "/jdk/bin/javac",
        "-J-XX:+UseSerialGC",
        "-J-Xmx64m",
        "-J-XX:SharedArchiveFile=/cache/javac.jsa",
    ]
    assert build.javac_argv({**OPTIONS, "javac_archive": ""}) == [
        "/jdk/bin/javac",
        "-J-XX:+UseSerialGC",
        "-J-Xmx64m",
        "-nowarn",
        "-encoding",
        "UTF-8",
    ]


def test_the_jdk_views_javac_maps_the_parents_archive(tmp_path: Path) -> None:
    """-Xshare:on makes a refused archive an error, not a silent slow start."""
    toolchains.prepare("java")
    options = json.loads(toolchains.compile_options(None, ""))  # in place, as rlimit sees it
    archive = Path(options["javac_archive"])
    assert archive.is_file(), options
    info = archive.stat()
    assert info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o644
    assert stat.S_IMODE(archive.parent.stat().st_mode) == 0o755
    (tmp_path / "Solution.java").write_text(
        "class Solution { int f() { return java.util.List.of(1).size(); } }\n"
    )
    argv = [*build.javac_argv(options), "-J-Xshare:on", "-d", str(tmp_path), str(tmp_path / "Solution.java")]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "Solution.class").is_file()
