"""Compiled languages: where each toolchain is, the command that runs a role (the compile
step ``harness/build.py``, then the built program), and the error naming the package to
install when a toolchain is missing."""

from __future__ import annotations

import functools
import json
import os
import shutil

MIB = 1024 * 1024
# Debian packages that provide each toolchain (named in the "missing" error)
PACKAGES = {
    "go": ("go", "golang-go"),
    "java": ("javac", "default-jdk-headless"),
    "cpp": ("g++", "g++"),
}
TYPESCRIPT_PACKAGE = "typescript (npm install -g typescript@5.6.3)"
TYPESCRIPT_ROOTS = ("/usr/local/lib/node_modules", "/usr/lib/node_modules")


@functools.lru_cache(maxsize=None)
def tool(name: str) -> str | None:
    found = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
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


def compile_options(memory: int | None) -> str:
    """What ``harness/build.py`` needs besides the sources: the toolchains' paths."""
    options = {
        "go": tool("go") or "go",
        "cxx": tool("g++") or "g++",
        "javac": tool("javac") or "javac",
        "java": tool("java") or "java",
        "jvm_flags": jvm_flags(memory),
    }
    return json.dumps(options)


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


@functools.lru_cache(maxsize=1)
def toolchain_paths() -> tuple[str, ...]:
    """Host folders the compilers read outside /usr (Debian's JDK keeps its configuration
    in /etc/java-N-openjdk, reached through symlinks in the JDK's home)."""
    found: list[str] = []
    java = tool("java")
    if java is not None:
        home = os.path.dirname(os.path.dirname(java))
        for name in ("conf/security/java.security", "conf/logging.properties"):
            target = os.path.realpath(os.path.join(home, name))
            if os.path.exists(target) and not target.startswith("/usr/"):
                # /etc/java-17-openjdk/security/java.security -> /etc/java-17-openjdk
                parts = target.split(os.sep)
                found.append(os.sep.join(parts[:3]) if target.startswith("/etc/") else os.path.dirname(target))
    return tuple(dict.fromkeys(found))
