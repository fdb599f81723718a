"""Languages the sandbox runs. Adding one is a small unit: a ``Language`` with the
command that runs each role (candidate, checker, script) and, in ``harness/``, the
three role scripts speaking the frame protocol (see ``harness/js/`` for a model).

Python roles fork from the warm zygote without exec; other languages exec their
runtime inside the sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from assay.errors import UnknownLanguageError, UnsupportedModeError
from assay.sandbox import _defines
from assay.sandbox import _toolchains as toolchains
from assay.sandbox._launch import Runtime

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
UnknownLanguage = UnknownLanguageError
UnsupportedMode = UnsupportedModeError

__all__ = [
    "CPP",
    "GO",
    "JAVA",
    "JAVASCRIPT",
    "LANGUAGES",
    "Language",
    "PYTHON",
    "ROLES",
    "TYPESCRIPT",
    "Spawn",
    "UnknownLanguageError",
    "UnsupportedModeError",
    "get_language",
    "strip_fences",
]


ROLES = ("candidate", "checker", "script")


@dataclass(frozen=True)
class Spawn:
    role: str  # "py_candidate" etc. (fork only), or "exec"
    argv: list[str]


@dataclass(frozen=True)
class Language:
    name: str
    aliases: tuple[str, ...]
    fence_tags: tuple[str, ...]
    defines: Callable[[str, str], bool]
    spawn: Callable[[str, str, Runtime, int | None], Spawn]
    runtime_missing: Callable[[Runtime], str | None]
    compiled: bool = False  # a compile step runs first and reports {"event": "compiled"}
    test_programs: bool = True  # the test-program mode (a checker role) exists
    float32: bool = False  # has a float32 type, whose results cross as {"$float32": ...}
    prepare: Callable[[], None] = lambda: None  # parent-side, once: prebuilt harness parts

    def program(self, prompt: str, completion: str, entry_point: str) -> str:
        """HumanEval style: prompt + completion, unless the completion already holds the
        whole function (or repeats the prompt)."""
        if prompt and completion.lstrip().startswith(prompt.strip()):
            return completion
        if self.defines(completion, entry_point):
            return completion
        return prompt + completion


def _python_spawn(role: str, harness_root: str, runtime: Runtime, memory: int | None) -> Spawn:
    return Spawn(f"py_{role}", [])


def _js_spawn(role: str, harness_root: str, runtime: Runtime, memory: int | None) -> Spawn:
    assert runtime.node is not None
    flags = []
    if memory:
        # V8 then fails with its own "heap out of memory" before the rlimit bites
        flags.append(f"--max-old-space-size={max(16, memory * 3 // 4 // (1024 * 1024))}")
    script = f"{harness_root}/harness/js/{role}.js"
    return Spawn("exec", [runtime.node, *flags, script])


def _js_missing(runtime: Runtime) -> str | None:
    if runtime.node is None:
        return "JavaScript needs Node.js: no `node` on PATH (apt-get install nodejs)"
    return None


def _compiled_spawn(language: str) -> Callable[[str, str, Runtime, int | None], Spawn]:
    def spawn(role: str, harness_root: str, runtime: Runtime, memory: int | None) -> Spawn:
        boot = toolchains.BUILD_BOOT.format(root=harness_root)
        options = toolchains.compile_options(memory, harness_root)
        python = toolchains.system_python() or runtime.python
        return Spawn("exec", [python, "-I", "-S", "-B", "-c", boot, language, role, options])

    return spawn


def _ts_spawn(role: str, harness_root: str, runtime: Runtime, memory: int | None) -> Spawn:
    js = _js_spawn(role, harness_root, runtime, memory)
    script = f"{harness_root}/harness/ts/{role}.js"
    return Spawn("exec", [*js.argv[:-1], script, toolchains.typescript_module() or ""])


def _ts_missing(runtime: Runtime) -> str | None:
    if runtime.node is None:
        return "TypeScript needs Node.js: no `node` on PATH (apt-get install nodejs)"
    if toolchains.typescript_module() is None:
        return (
            f"TypeScript needs the typescript compiler: not found (install {toolchains.TYPESCRIPT_PACKAGE})"
        )
    return None


PYTHON = Language(
    name="python",
    aliases=("python", "py", "python3"),
    fence_tags=("python", "py", "python3"),
    defines=_defines.python_defines,
    spawn=_python_spawn,
    runtime_missing=lambda runtime: None,
)
JAVASCRIPT = Language(
    name="javascript",
    aliases=("javascript", "js", "node", "nodejs"),
    fence_tags=("javascript", "js", "node", "jsx", "mjs"),
    defines=_defines.js_defines,
    spawn=_js_spawn,
    runtime_missing=_js_missing,
)
TYPESCRIPT = Language(
    name="typescript",
    aliases=("typescript", "ts"),
    fence_tags=("typescript", "ts", "tsx"),
    defines=_defines.ts_defines,
    spawn=_ts_spawn,
    runtime_missing=_ts_missing,
    compiled=True,
)
GO = Language(
    name="go",
    aliases=("go", "golang"),
    fence_tags=("go", "golang"),
    defines=_defines.go_defines,
    spawn=_compiled_spawn("go"),
    runtime_missing=lambda runtime: toolchains.missing_toolchain("go"),
    compiled=True,
    float32=True,
    prepare=lambda: toolchains.prepare("go"),
)
JAVA = Language(
    name="java",
    aliases=("java",),
    fence_tags=("java",),
    defines=_defines.java_defines,
    spawn=_compiled_spawn("java"),
    runtime_missing=lambda runtime: toolchains.missing_toolchain("java"),
    compiled=True,
    float32=True,
    prepare=lambda: toolchains.prepare("java"),
)
CPP = Language(
    name="cpp",
    aliases=("cpp", "c++", "cxx", "cc"),
    fence_tags=("cpp", "c++", "cxx", "cc", "hpp"),
    defines=_defines.cpp_defines,
    spawn=_compiled_spawn("cpp"),
    runtime_missing=lambda runtime: toolchains.missing_toolchain("cpp"),
    compiled=True,
    float32=True,
    prepare=lambda: toolchains.prepare("cpp"),
)
LANGUAGES = {language.name: language for language in (PYTHON, JAVASCRIPT, TYPESCRIPT, GO, JAVA, CPP)}


def get_language(name: str) -> Language:
    key = name.strip().lower()
    for language in LANGUAGES.values():
        if key in language.aliases:
            return language
    known = ", ".join(sorted(LANGUAGES))
    raise UnknownLanguageError(f"unknown language {name!r}; the sandbox runs: {known}")


_FENCE = re.compile(r"^```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^```[ \t]*$|\Z)", re.M | re.S)


def strip_fences(text: str, language: Language) -> str:
    """The code inside markdown fences: the first block tagged with the language, else
    the first block; text without fences is returned as it is."""
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
    if not blocks:
        return text
    for tag, body in blocks:
        if tag in language.fence_tags:
            return body
    return blocks[0][1]
