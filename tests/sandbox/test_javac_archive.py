"""javac's class-data archive (``_toolchains._build_javac_archive``): dumped once by the
parent, read-only to every job, passed to each javac run of the compile step, and mapped
by the JDK view's javac (not silently refused, which would cost every compile its CPU)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from assay.sandbox import _toolchains as toolchains
from assay.sandbox.harness import build

pytestmark = [pytest.mark.toolchains]

OPTIONS = {"javac": "/jdk/bin/javac", "jvm_flags": "-XX:+UseSerialGC -Xmx64m"}


def test_each_javac_run_maps_the_archive_when_there_is_one(tmp_path: Path) -> None:
    archive = tmp_path / "javac.jsa"
    archive.write_bytes(b"x" * 100)
    whole = {**OPTIONS, "javac_archive": str(archive), "javac_archive_bytes": "100"}
    assert build.javac_argv(whole)[:4] == [
        "/jdk/bin/javac",
        "-J-XX:+UseSerialGC",
        "-J-Xmx64m",
        f"-J-XX:SharedArchiveFile={archive}",
    ]
    plain = ["/jdk/bin/javac", "-J-XX:+UseSerialGC", "-J-Xmx64m", "-nowarn", "-encoding", "UTF-8"]
    assert build.javac_argv({**OPTIONS, "javac_archive": ""}) == plain
    # cut short since the parent saw it written: mapping it would kill javac (SIGBUS)
    assert build.javac_argv({**whole, "javac_archive_bytes": "200"}) == plain
    assert build.javac_argv({**whole, "javac_archive": str(tmp_path / "gone.jsa")}) == plain


def test_a_truncated_archive_is_left_out_and_the_compile_goes_on(tmp_path: Path) -> None:
    """The JVM maps the archive's regions past the end of a file cut short and dies of
    SIGBUS: every later compile, candidate and checker, failed."""
    toolchains.prepare("java")
    options = json.loads(toolchains.compile_options(None, ""))
    cut = tmp_path / "javac.jsa"
    shutil.copyfile(options["javac_archive"], cut)
    os.truncate(cut, cut.stat().st_size // 2)
    options["javac_archive"] = str(cut)
    (tmp_path / "Solution.java").write_text("class Solution { int f() { return 1; } }\n")
    argv = [*build.javac_argv(options), "-d", str(tmp_path), str(tmp_path / "Solution.java")]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[:600] + done.stderr[:600]


def test_an_archive_cut_short_in_the_cache_is_dumped_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toolchains.prepare("java")
    view = os.path.join(toolchains.cache_root(), toolchains._prebuilt["jdk"])
    monkeypatch.setitem(toolchains._prebuilt, "jdk", view)  # absolute: found from any cache root
    monkeypatch.setattr(toolchains, "cache_root", lambda: str(tmp_path))
    archive = toolchains._build_javac_archive()
    size = os.path.getsize(archive)
    assert toolchains.javac_archive_bytes(archive) == size
    os.truncate(archive, size // 2)  # a crash before the disk had it all, say
    assert toolchains.javac_archive_bytes(archive) is None
    assert toolchains._build_javac_archive() == archive
    assert toolchains.javac_archive_bytes(archive) == os.path.getsize(archive) > size // 2


# an annotation processor that leaves a file in the folder it runs in
PROCESSOR = """import javax.annotation.processing.*;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.TypeElement;
import java.util.Set;
@SupportedAnnotationTypes("*")
public class Planted extends AbstractProcessor {
    @Override public synchronized void init(ProcessingEnvironment env) {
        super.init(env);
        try { java.nio.file.Files.writeString(java.nio.file.Path.of(System.getProperty("user.dir"), "ran"), "ran"); }
        catch (Exception e) { throw new RuntimeException(e); }
    }
    @Override public SourceVersion getSupportedSourceVersion() { return SourceVersion.latestSupported(); }
    @Override public boolean process(Set<? extends TypeElement> a, RoundEnvironment r) { return false; }
}
"""


@pytest.mark.parametrize("through", ["folder", "CLASSPATH"])
@pytest.mark.parametrize("step", ["_build_javac_archive", "_build_java_classes"])
def test_the_parents_own_javac_runs_no_processor_of_its_callers(
    step: str, through: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """javac given no class path looks in "." (or $CLASSPATH) for annotation processors and
    runs them: in the parent, as its user, outside any sandbox."""
    toolchains.prepare("java")
    planted = tmp_path / "planted"
    (planted / "META-INF" / "services").mkdir(parents=True)
    (planted / "Planted.java").write_text(PROCESSOR)
    javac = toolchains.tool("javac") or "javac"
    subprocess.run([javac, "-d", str(planted), str(planted / "Planted.java")], check=True)
    (planted / "META-INF" / "services" / "javax.annotation.processing.Processor").write_text("Planted\n")
    view = os.path.join(toolchains.cache_root(), toolchains._prebuilt["jdk"])
    monkeypatch.setitem(toolchains._prebuilt, "jdk", view)
    monkeypatch.setattr(toolchains, "cache_root", lambda: str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(planted if through == "folder" else elsewhere)
    if through == "CLASSPATH":
        monkeypatch.setenv("CLASSPATH", str(planted))
    assert getattr(toolchains, step)()
    assert not (planted / "ran").exists() and not (elsewhere / "ran").exists()


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


def _fake_jdk(home: Path, linked: Path) -> None:
    """A JDK's shape: launchers, conf, lib/server/libjvm.so, and a folder of the system's
    (``include``) that the view links to."""
    (home / "bin").mkdir(parents=True)
    for launcher in ("java", "javac"):
        (home / "bin" / launcher).write_text("#!/bin/sh\necho 'javac 99.0.0'\n")
        (home / "bin" / launcher).chmod(0o755)
    (home / "conf").mkdir()
    (home / "conf" / "settings").write_text("x\n")
    (home / "lib" / "server").mkdir(parents=True)
    (home / "lib" / "server" / "libjvm.so").write_bytes(b"\x7fELF")
    (home / "lib" / "modules").write_bytes(b"m")
    linked.mkdir()
    (home / "include").symlink_to(linked)


def test_the_jdk_view_changes_no_folder_of_the_systems_jdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, linked = tmp_path / "jdk", tmp_path / "system-include"
    _fake_jdk(home, linked)
    linked.chmod(0o700)
    monkeypatch.setattr(
        toolchains, "tool", lambda name: str(home / "bin" / name) if name == "javac" else None
    )
    monkeypatch.setattr(toolchains, "cache_root", lambda: str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    view = Path(toolchains._build_jdk_view())
    assert (view / "bin" / "javac").is_file() and (view / "include").is_symlink()
    assert stat.S_IMODE(linked.stat().st_mode) == 0o700  # chmod followed the link before
    assert stat.S_IMODE((view / "lib" / "server").stat().st_mode) == 0o755


def test_a_jdk_view_that_cannot_be_made_leaves_nothing_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "jdk"
    _fake_jdk(home, tmp_path / "system-include")
    (home / "bin" / "java").unlink()  # the launcher's copy fails
    monkeypatch.setattr(
        toolchains, "tool", lambda name: str(home / "bin" / name) if name == "javac" else None
    )
    monkeypatch.setattr(toolchains, "cache_root", lambda: str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    with pytest.raises(OSError):
        toolchains._build_jdk_view()
    assert list((tmp_path / "cache").iterdir()) == []
