"""Compiled languages: where each toolchain is, the command that runs a role (the compile
step ``harness/build.py``, then the built program), and the error naming the package to
install when a toolchain is missing."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable

from assay.sandbox._launch import SANDBOX_HARNESS_ROOT

MIB = 1024 * 1024
# where the namespace backends mount cache_root() (read-only); the rlimit backend uses it in place
SANDBOX_PREBUILT = SANDBOX_HARNESS_ROOT + "/prebuilt"
# Debian packages that provide each toolchain (named in the "missing" error)
PACKAGES = {
    "go": ("go", "golang-go"),
    "java": ("javac", "default-jdk-headless"),
    "cpp": ("g++", "g++"),
}
# the compile step (harness/build.py), run by the system's Python inside the sandbox
BUILD_BOOT = "import sys; sys.path.insert(0, {root!r}); from harness.build import main; sys.exit(main())"
TYPESCRIPT_PACKAGE = "typescript (npm install -g typescript@5.6.3)"
TYPESCRIPT_ROOTS = ("/usr/local/lib/node_modules", "/usr/lib/node_modules")


@functools.cache
def tool(name: str) -> str | None:
    found = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
    return os.path.realpath(found) if found else None


def system_python() -> str | None:
    """The compile step's interpreter: the system's Python 3, which every sandbox user
    may run (ours may live in a home folder the rlimit backend's own uid cannot enter)."""
    found = shutil.which("python3", path="/usr/bin:/bin")
    return os.path.realpath(found) if found else None


def jvm_flags(memory: int | None) -> str:
    """A small JVM: one GC and JIT thread each, no perf-data file in /tmp, and a heap
    inside the job's memory limit (the JVM reserves more virtual memory than it uses)."""
    heap = max(64, (memory or 1024 * MIB) // 2 // MIB)
    flags = [
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-XX:CICompilerCount=1",
        "-XX:-UsePerfData",
        "-XX:ReservedCodeCacheSize=32m",
        "-XX:MaxMetaspaceSize=128m",
        "-Xss16m",
        f"-Xmx{heap}m",
        "-Xshare:auto",
    ]
    return " ".join(flags)


def compile_options(memory: int | None, harness_root: str) -> str:
    """What ``harness/build.py`` needs besides the sources: the toolchains' paths and the
    prebuilt harness parts (empty until ``prepare`` built them), as the sandbox sees them."""
    base = SANDBOX_PREBUILT if harness_root == SANDBOX_HARNESS_ROOT else cache_root()

    def seen(name: str) -> str:
        return os.path.join(base, name) if name else ""

    jdk = seen(_prebuilt.get("jdk", ""))
    options = {
        "go": tool("go") or "go",
        "cxx": tool("g++") or "g++",
        "javac": os.path.join(jdk, "bin", "javac") if jdk else tool("javac") or "javac",
        "java": os.path.join(jdk, "bin", "java") if jdk else tool("java") or "java",
        "javac_archive": seen(_prebuilt.get("javac_archive", "")),
        "javac_archive_bytes": _prebuilt.get("javac_archive_bytes", ""),
        "jvm_flags": jvm_flags(memory),
        "cpp_header": seen(_prebuilt.get("cpp", "")),
        "cpp_header_stdcxx": seen(_prebuilt.get("cpp_stdcxx", "")),
        **{f"cpp_{unit}_o": seen(_prebuilt.get(f"cpp_{unit}_o", "")) for unit in CPP_UNITS},
        **{f"cpp_{unit}_o_sha256": _prebuilt.get(f"cpp_{unit}_o_sha256", "") for unit in CPP_UNITS},
        "java_classes": seen(_prebuilt.get("java", "")),
        "go_cache": seen(_prebuilt.get("go", "")),
    }
    return json.dumps(options)


# -- prebuilt harness parts: built once by the trusted parent, read-only in the sandbox --
HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness")
CPP_FLAGS = ("-std=c++17", "-O1", "-pipe")
# the C++ harness's code that does not depend on the entry point's types, harness/cpp/UNIT.cpp,
# compiled once into UNIT.o: the candidate's side, and the test program's
CPP_UNITS = ("assay", "assay_checker")
CPP_SOURCES = ("assay.hpp", "assay.cpp", "assay_checker.hpp", "assay_checker.cpp")
_prebuilt: dict[str, str] = {}
_prepared: set[str] = set()  # languages whose every part is built: their parts are read without the lock
_prebuilding = threading.Lock()


@functools.lru_cache(maxsize=1)
def cache_root() -> str:
    """Where prebuilt harness parts live, mounted read-only into every sandbox (the
    candidate cannot write into it, so nothing of one job reaches the next). Outside any
    home folder: the rlimit backend's dedicated uid must be able to read it. A folder
    someone else owns, or may write into, is never used."""
    root = os.environ.get("ASSAY_TOOLCHAIN_CACHE") or os.path.join(
        tempfile.gettempdir(), f"assay-toolchains-{os.geteuid()}"
    )
    try:
        os.makedirs(root, mode=0o755, exist_ok=True)
        info = os.lstat(root)
        trusted = info.st_uid == os.geteuid() and not info.st_mode & 0o022 and os.path.isdir(root)
    except OSError:
        trusted = False
    if not trusted:
        root = tempfile.mkdtemp(prefix="assay-toolchains-")
        os.chmod(root, 0o755)
    return os.path.realpath(root)


def prepare(language: str) -> None:
    """Build what makes each compile faster, once per machine and harness version: a
    precompiled header of the C++ harness, the compiled Java harness classes, a Go build
    cache of the standard packages."""
    if language not in PREBUILDS or language in _prepared:
        return
    with _prebuilding:
        if language in _prepared:
            return
        _prebuild(language)
        _prepared.add(language)  # last: a job that finds it reads every part built


def _prebuild(language: str) -> None:
    """Every part ``language``'s jobs use, each one's build attempted (a part that fails is
    left to the jobs, which compile without it)."""
    if language == "java":
        _prebuilt["jdk"] = _relative(_attempt(_build_jdk_view))
        if _prebuilt["jdk"]:
            _prebuilt["javac_archive"] = _relative(_attempt(_build_javac_archive))
            size = javac_archive_bytes(os.path.join(cache_root(), _prebuilt["javac_archive"]))
            _prebuilt["javac_archive_bytes"] = "" if size is None else str(size)
    _prebuilt[language] = _relative(_attempt(PREBUILDS[language]))
    if language == "cpp" and _prebuilt["cpp"]:
        _prebuilt["cpp_stdcxx"] = _relative(_attempt(_build_cpp_stdcxx_header))
        for unit in CPP_UNITS:
            _prebuilt[f"cpp_{unit}_o"] = _relative(_attempt(functools.partial(_build_cpp_object, unit)))
            _prebuilt[f"cpp_{unit}_o_sha256"] = object_digest(_prebuilt[f"cpp_{unit}_o"])


def _attempt(build: Callable[[], str]) -> str:
    try:
        return build()
    except (OSError, subprocess.SubprocessError):
        return ""  # compile from source in every job: slower, same result


def _relative(path: str) -> str:
    return os.path.relpath(path, cache_root()) if path else ""


def _version_key(*parts: str) -> str:
    digest = hashlib.sha256("\0".join(parts).encode())
    return digest.hexdigest()[:16]


def _tool_version(command: str) -> str:
    done = subprocess.run([command, "--version"], capture_output=True, timeout=30)
    return done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")


# The second precompiled header, for candidates whose first line includes <bits/stdc++.h>
# (harness/build.py): the same headers in the order g++ would read them.
CPP_STDCXX_HEADER = '#include "assay.hpp"\n#include <bits/stdc++.h>\n'


def _cpp_source(name: str) -> str:
    with open(os.path.join(HARNESS, "cpp", name), encoding="utf-8") as handle:
        return handle.read()


def _build_cpp_header() -> str:
    cxx = tool("g++")
    if cxx is None:
        return ""
    header = _cpp_source("assay.hpp")
    sources = [_cpp_source(name) for name in CPP_SOURCES]
    key = _version_key(*sources, CPP_STDCXX_HEADER, _tool_version(cxx), *CPP_FLAGS)
    folder = os.path.join(cache_root(), "cpp-" + key)
    os.makedirs(folder, mode=0o755, exist_ok=True)
    _precompile(cxx, folder, "assay.hpp", header)
    return os.path.join(folder, "assay.hpp")


def _build_cpp_stdcxx_header() -> str:
    """``CPP_STDCXX_HEADER`` precompiled beside assay.hpp's (a library without
    <bits/stdc++.h> fails it: candidates then all get the plain header)."""
    cxx = tool("g++")
    assert cxx is not None, "assay.hpp was precompiled"
    folder = os.path.join(cache_root(), os.path.dirname(_prebuilt["cpp"]))
    _precompile(cxx, folder, "assay_stdcxx.hpp", CPP_STDCXX_HEADER)
    return os.path.join(folder, "assay_stdcxx.hpp")


def _build_cpp_object(unit: str) -> str:
    """harness/cpp/UNIT.cpp compiled beside assay.hpp's precompiled header with the same
    flags, linked into every C++ job (~0.5-0.8 s of CPU a compile). Its digest is written
    before the object's name and checked here and by each job before use (a job whose
    check fails compiles the source itself); one that fails it here is built again."""
    cxx = tool("g++")
    assert cxx is not None, "assay.hpp was precompiled"
    folder = os.path.join(cache_root(), os.path.dirname(_prebuilt["cpp"]))
    target = os.path.join(folder, unit + ".o")
    if _recorded_digest(target) is not None:
        return target
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        built = os.path.join(scratch, unit + ".o")
        subprocess.run(
            [cxx, *CPP_FLAGS, "-c", os.path.join(HARNESS, "cpp", unit + ".cpp"), "-o", built],
            check=True,
            capture_output=True,
            timeout=300,
            cwd=scratch,
        )
        with open(built, "rb") as handle:
            os.fsync(handle.fileno())
            digest = hashlib.sha256(handle.read()).hexdigest()
        _write_durably(target + ".sha256", digest.encode())
        os.chmod(built, 0o644)
        os.replace(built, target)  # last: its presence means ready
    return target


def object_digest(relative: str) -> str:
    """The prebuilt object's recorded digest, if the file still has it (else "": the jobs
    compile its source themselves)."""
    if not relative:
        return ""
    return _recorded_digest(os.path.join(cache_root(), relative)) or ""


def _recorded_digest(path: str) -> str | None:
    """The SHA-256 written beside ``path`` when it was built, if ``path`` still hashes to it:
    an object cut short or garbled (a crash before the disk had it) fails every link."""
    try:
        with open(path + ".sha256", "rb") as handle:
            recorded = handle.read(64).decode("ascii")
        with open(path, "rb") as handle:
            actual = hashlib.sha256(handle.read()).hexdigest()
    except (OSError, UnicodeDecodeError):
        return None
    return recorded if actual == recorded else None


def _precompile(cxx: str, folder: str, name: str, text: str) -> None:
    """``folder/name`` and its ``.gch``, unless there already; the headers it includes by
    a relative name are found in ``folder``."""
    target = os.path.join(folder, name)
    if os.path.exists(target + ".gch"):
        return
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        source = os.path.join(scratch, name)
        with open(source, "w", encoding="utf-8") as handle:
            handle.write(text)
        subprocess.run(
            [cxx, *CPP_FLAGS, "-iquote", folder, "-x", "c++-header", source, "-o", source + ".gch"],
            check=True,
            capture_output=True,
            timeout=300,
        )
        # on the disk before its name: a .gch cut short fails every compile that reads it
        with open(source + ".gch", "rb") as handle:
            os.fsync(handle.fileno())
        os.chmod(source + ".gch", 0o644)
        os.replace(source, target)
        os.replace(source + ".gch", target + ".gch")  # last: its presence means ready


def _build_jdk_view() -> str:
    """Debian's JDK reads its configuration through symlinks into /etc/java-N-openjdk,
    which no sandbox shows: a view of the JDK with that configuration copied in (the
    launchers and libjvm.so copied too, since the JVM finds its home from their real
    paths; everything else linked)."""
    javac = tool("javac")
    if javac is None:
        return ""
    home = os.path.dirname(os.path.dirname(javac))
    folder = os.path.join(cache_root(), "jdk-" + _version_key(home, _tool_version(javac)))
    if os.path.exists(os.path.join(folder, "bin", "java")):
        return folder
    staging = tempfile.mkdtemp(dir=cache_root())
    try:
        _fill_jdk_view(home, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # no half-made view left in the cache
        raise
    try:
        os.rename(staging, folder)
    except OSError:  # built meanwhile by another process
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _fill_jdk_view(home: str, staging: str) -> None:
    for name in os.listdir(home):
        source = os.path.join(home, name)
        if name == "conf":
            shutil.copytree(source, os.path.join(staging, name), symlinks=False)
        elif name in ("bin", "lib"):
            os.mkdir(os.path.join(staging, name))
        else:
            os.symlink(os.path.realpath(source), os.path.join(staging, name))
    for launcher in ("java", "javac"):
        shutil.copy2(os.path.join(home, "bin", launcher), os.path.join(staging, "bin", launcher))
    _link_tree(os.path.join(home, "lib"), os.path.join(staging, "lib"), copy={"server/libjvm.so"})
    for root, dirs, _ in os.walk(staging):
        for name in dirs:
            path = os.path.join(root, name)
            # the view's own folders only: chmod follows a link, into the system's JDK
            # (as root it changed those folders' modes; as another user it failed)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
    os.chmod(staging, 0o755)


def _build_javac_archive() -> str:
    """An archive of the classes javac loads (class data sharing), dumped by the JDK view's
    javac compiling the harness's Java sources: a javac run that maps it starts on ~35% less
    CPU. The JVM checks it against itself at each start (and shares nothing where it does
    not fit), so a stale one costs only its use."""
    jdk = os.path.join(cache_root(), _prebuilt["jdk"])
    javac = os.path.join(jdk, "bin", "javac")
    folder = os.path.join(cache_root(), "javac-" + _version_key(jdk, _tool_version(javac), jvm_flags(None)))
    target = os.path.join(folder, "javac.jsa")
    if javac_archive_bytes(target) is not None:
        return target
    os.makedirs(folder, mode=0o755, exist_ok=True)
    sources = [
        os.path.join(HARNESS, "java", name) for name in sorted(os.listdir(os.path.join(HARNESS, "java")))
    ]
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        archive = os.path.join(scratch, "javac.jsa")
        flags = [f"-J{flag}" for flag in jvm_flags(None).split()]
        _parent_javac(
            [javac, *flags, f"-J-XX:ArchiveClassesAtExit={archive}", "-nowarn", "-d", scratch, *sources]
        )
        size = os.path.getsize(archive)
        _write_durably(target + ".bytes", str(size).encode())
        with open(archive, "rb") as handle:
            os.fsync(handle.fileno())
        os.chmod(archive, 0o644)
        os.replace(archive, target)  # last: its presence means ready
    return target


def javac_archive_bytes(path: str) -> int | None:
    """The archive's size as it was written, if the file still has it: the JVM maps the
    archive's regions without checking the file's length, and one cut short (a crash
    before the disk had it, a truncation) kills javac with SIGBUS in every later job."""
    try:
        with open(path + ".bytes", "rb") as handle:
            size = int(handle.read(32))
        return size if os.path.getsize(path) == size else None
    except (OSError, ValueError):
        return None


def _write_durably(path: str, data: bytes) -> None:
    """``data`` at ``path``, on the disk before the name points at it."""
    staging = path + f".{os.getpid()}"
    with open(staging, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(staging, 0o644)
    os.replace(staging, path)


def _parent_javac(argv: list[str]) -> None:
    """javac run by this process (outside any sandbox, as its user) on the harness's own
    sources: with no annotation processing, in an empty folder, on an empty class path
    and without the variables that hand a JVM options or agents, so that nothing of the
    caller's folder, class path or environment runs in it."""
    dropped = ("CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")
    env = {name: value for name, value in os.environ.items() if name not in dropped}
    with tempfile.TemporaryDirectory() as empty:
        command = [argv[0], "-proc:none", "-cp", empty, *argv[1:]]
        subprocess.run(command, check=True, capture_output=True, timeout=300, cwd=empty, env=env)


def _link_tree(source: str, target: str, copy: set[str], prefix: str = "") -> None:
    for name in os.listdir(source):
        path, relative = os.path.join(source, name), prefix + name
        if relative in copy:
            shutil.copy2(path, os.path.join(target, name))
        elif any(c.startswith(relative + "/") for c in copy):
            os.mkdir(os.path.join(target, name))
            _link_tree(path, os.path.join(target, name), copy, relative + "/")
        else:
            os.symlink(os.path.realpath(path), os.path.join(target, name))


def _build_java_classes() -> str:
    javac = tool("javac")
    if javac is None:
        return ""
    names = ("AssayCandidate.java", "AssayChecker.java", "AssayJson.java", "AssayCodec.java")
    sources = [os.path.join(HARNESS, "java", name) for name in names]
    texts = []
    for source in sources:
        with open(source, encoding="utf-8") as handle:
            texts.append(handle.read())
    folder = os.path.join(cache_root(), "java-" + _version_key(*texts, _tool_version(javac)))
    if os.path.exists(os.path.join(folder, "AssayCandidate.class")):
        return folder
    staging = tempfile.mkdtemp(dir=cache_root())
    _parent_javac([javac, "-nowarn", "-d", staging, *sources])
    os.chmod(staging, 0o755)
    try:
        os.rename(staging, folder)
    except OSError:  # built meanwhile by another process
        shutil.rmtree(staging, ignore_errors=True)
    return folder


# The standard packages a Go job's build may need: the harness's, and those candidates
# and tests import most. Go ships them precompiled only for its default settings (cgo on;
# since Go 1.20 not at all), so under the compile step's settings (cgo off) a job whose
# candidate imports ``net`` or ``os/user`` compiled them again, each time (seconds of CPU).
GO_STANDARD_PACKAGES = (
    *("bufio", "bytes", "encoding/binary", "encoding/json", "errors", "fmt", "io", "math"),
    *("math/big", "os", "path/filepath", "reflect", "regexp", "runtime", "runtime/debug"),
    *("sort", "strconv", "strings", "sync", "syscall", "testing", "time", "unsafe"),
    *("unicode", "unicode/utf8", "math/bits", "math/rand", "container/heap", "container/list"),
    *("crypto/md5", "crypto/sha1", "crypto/sha256", "net", "os/exec", "os/user"),
)


def go_environment(cache: str, gopath: str) -> dict[str, str]:
    """The settings of every Go compile (harness/build.py repeats them inside the
    sandbox): GOPATH mode, nothing downloaded, no cgo. A cache entry is keyed by these
    (Go hashes them into its action ids), so one built under other settings is not used."""
    return {
        "GOCACHE": cache,
        "GOPATH": gopath,
        "GO111MODULE": "off",
        "CGO_ENABLED": "0",
        "GOFLAGS": "",
        "GOTOOLCHAIN": "local",
        "GOMAXPROCS": "2",
    }


def _build_go_cache() -> str:
    """A Go build cache holding ``GO_STANDARD_PACKAGES`` compiled as the compile step
    compiles them, read-only in every sandbox: a job's build reads its standard packages
    from it and compiles only its own (Go writes nothing there, it cannot)."""
    go = tool("go")
    if go is None:
        return ""
    version = subprocess.run([go, "version"], capture_output=True, timeout=60).stdout.decode(errors="replace")
    folder = os.path.join(cache_root(), "go-" + _version_key(go, version, *GO_STANDARD_PACKAGES))
    if os.path.exists(os.path.join(folder, "ready")):
        return os.path.join(folder, "cache")
    os.makedirs(folder, mode=0o755, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        cache, home = os.path.join(scratch, "cache"), os.path.join(scratch, "home")
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": scratch}
        env.update(go_environment(cache, os.path.join(home, "go")))
        subprocess.run(
            [go, "build", *GO_STANDARD_PACKAGES],
            env=env,
            cwd=scratch,
            check=True,
            capture_output=True,
            timeout=600,
        )
        _readable_by_all(cache)
        try:
            os.rename(cache, os.path.join(folder, "cache"))
        except OSError:  # built meanwhile by another process
            pass
    with open(os.path.join(folder, "ready"), "w"):  # last: its presence means ready
        pass
    return os.path.join(folder, "cache")


def _readable_by_all(root: str) -> None:
    """Go makes its cache private to its user: every sandbox's user reads it."""
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


PREBUILDS: dict[str, Callable[[], str]] = {
    "cpp": _build_cpp_header,
    "java": _build_java_classes,
    "go": _build_go_cache,
}


def missing_toolchain(language: str) -> str | None:
    command, package = PACKAGES[language]
    needed = [command, "java"] if language == "java" else [command]
    absent = [name for name in needed if tool(name) is None]
    if absent:
        return f"{language} needs `{absent[0]}`, which is not on PATH (apt-get install {package})"
    return None


@functools.lru_cache(maxsize=1)
def typescript_module() -> str | None:
    override = os.environ.get("ASSAY_TYPESCRIPT")
    roots = (override,) if override else TYPESCRIPT_ROOTS
    for root in roots:
        path = os.path.join(root, "typescript") if not root.endswith("typescript") else root
        if os.path.isfile(os.path.join(path, "lib", "typescript.js")):
            return os.path.realpath(path)
    return None
