"""The compile step of compiled languages, run inside the sandbox before any job code.

``main()``, argv LANGUAGE ROLE OPTIONS_JSON (booted by ``_toolchains.BUILD_BOOT``): read
the setup frame, write the sources into the job's folder, run the compiler (a trusted
tool, under the job's limits), report ``{"event": "compiled"}`` or a compile error, wait
for the go-ahead, then exec the built program on the same descriptors (1/2 output, 3
frames in, 4 frames out). The program speaks the frame protocol from there on; the
parent measures the compile time itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

from . import frames, go_checker, kept_build, proxies, shared_build

FRAMES_IN, FRAMES_OUT = 3, 4
HERE = os.path.dirname(os.path.abspath(__file__))
ERROR_LINES = 20  # the compiler's first lines are the useful ones
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# A compiler's driver reports a child it lost (cc1plus, Go's compile) with a plain exit
# code; these say a limit or the machine failed it, not the sources (a candidate quoting
# them in an identifier only loses the sharing of its own error).
RESOURCE_FAILURE = re.compile(
    r"signal terminated program|signal: |\bKilled\b|out of memory|OutOfMemoryError"
    r"|virtual memory exhausted|Cannot allocate memory|No space left|Too many open files"
    r"|Resource temporarily unavailable|CPU time limit",
    re.I,
)


class CompileFailed(Exception):
    """The compiler's complaint; ``signaled``: it was killed or ran out of something (a
    limit, the machine), not refused: an error another job of the same bytes may not get."""

    def __init__(self, text: str, signaled: bool = False) -> None:
        super().__init__(text)
        self.signaled = signaled or RESOURCE_FAILURE.search(text) is not None


def compile_with(argv: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=env)
    if done.returncode != 0:
        text = (done.stdout + done.stderr).decode("utf-8", "replace").strip()
        if done.returncode < 0:
            text += f"\n(the compiler was killed by signal {-done.returncode}: a resource limit?)"
        raise CompileFailed(text or f"{argv[0]} failed with exit code {done.returncode}", done.returncode < 0)


def first_lines(text: str) -> str:
    lines = text.splitlines()
    head = "\n".join(lines[:ERROR_LINES])
    if len(lines) > ERROR_LINES:
        head += f"\n... ({len(lines) - ERROR_LINES} more lines)"
    return head


# -- one recipe per language: sources in, argv of the built program out -------------------
def build_go(role: str, code: str, entry: str, options: dict[str, str]) -> list[str]:
    if not re.search(r"^\s*package\s+\w+", code, re.M):
        code = "package main\n" + code
    code = re.sub(r"^(\s*)package\s+\w+", r"\1package main", code, count=1, flags=re.M)
    _write("solution.go", code)
    harness = ["assay_frames.go", "assay_codec.go", "assay_serve.go"]
    sources = ["solution.go"]
    if role == "candidate":
        for name in harness:  # go build wants every named file in one folder
            shutil.copyfile(os.path.join(HERE, "go", name[len("assay_") :]), name)
        _write(
            "assay_main.go",
            f'package main\n\nimport "reflect"\n\nfunc main() {{ assayServe(reflect.ValueOf({entry})) }}\n',
        )
        sources += ["assay_main.go", *harness]
    compile_with([options["go"], "build", "-o", "program", *sources], _go_env(options))
    return [os.path.join(os.getcwd(), "program")]


def _go_env(options: dict[str, str]) -> dict[str, str]:
    """GOPATH mode, nothing downloaded (the settings of ``_toolchains.go_environment``).
    The build cache is the parent's prebuilt one of the standard packages, read-only (Go
    reads it and writes nothing), else one in the job's folder; nothing else is shared."""
    cwd = os.getcwd()
    return {
        **os.environ,
        "GOCACHE": options.get("go_cache") or os.path.join(cwd, ".gocache"),
        "GOPATH": os.path.join(cwd, ".gopath"),
        "GO111MODULE": "off",
        "CGO_ENABLED": "0",
        "GOFLAGS": "",
        "GOTOOLCHAIN": "local",
        "GOMAXPROCS": "2",
    }


def cpp_entry(code: str, entry: str) -> str:
    """The entry point as a function pointer. ``using namespace std`` makes names such as
    ``unique``, ``max_element`` or ``strlen`` overloaded, so the candidate's own
    declaration, copied under another name, picks its overload."""
    pattern = rf"^[ \t]*(?P<ret>[\w:<>,*&\[\] \t]*?[\w>*&])[\s*&]*\b{re.escape(entry)}\s*\((?P<params>[^{{}};]*?)\)\s*(?:const\s*)?\{{"
    match = re.search(pattern, code, re.M)
    ret_text = match.group("ret") if match else ""
    if match is None or ret_text.strip() in ("return", "else") or ret_text.count("<") != ret_text.count(">"):
        return f"&{entry}"  # not found, or a return type over several lines: as written
    ret = re.sub(r"\b(static|inline|constexpr)\b", "", match.group("ret")).strip()
    return f"static_cast<{ret} (*)({_cpp_parameter_types(match.group('params'))})>(&{entry})"


def _cpp_parameter_types(params: str) -> str:
    """``vector<int> l, const string& s`` without the names (a name after a type; the
    commas inside template brackets are not separators)."""
    parts, depth, current = [], 0, ""
    for char in params:
        depth += char == "<"
        depth -= char == ">"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current)
    types = []
    for part in parts:
        part = part.split("=")[0].strip()  # a default argument
        named = re.match(r"^(.*?[\w>*&\]])\s*[*&]*\s*\b([A-Za-z_]\w*)$", part)
        if (
            named
            and not re.search(r"[*&]\s*$", part)
            and named.group(1).strip() not in ("const", "unsigned", "signed", "long", "short")
        ):
            kept = part[: part.rfind(named.group(2))].strip()
            types.append(kept)
        else:
            types.append(part)
    return ", ".join(types)


def build_cpp(role: str, code: str, entry: str, options: dict[str, str]) -> list[str]:
    if role == "candidate":
        code += f"\n\nint main() {{ return assay::serve({cpp_entry(code, entry)}); }}\n"
    _write("solution.cpp", code)
    argv = [options["cxx"], "-std=c++17", "-O1", "-pipe", "-o", "program"]
    harness: list[str] = []
    if role == "candidate":
        argv += ["-include", cpp_candidate_header(code, options)]
        harness = cpp_harness_code(options, "assay")
    compile_with([*argv, "solution.cpp", *harness], dict(os.environ))
    return [os.path.join(os.getcwd(), "program")]


def cpp_harness_code(options: dict[str, str], *units: str) -> list[str]:
    """Where the harness's own code (harness/cpp/UNIT.cpp) is linked from: the parent's
    prebuilt object when it hashes to the digest recorded as it was built, else the
    source, compiled in this job as a translation unit of its own (the candidate's macros
    reach neither)."""
    found = []
    for unit in units:
        prebuilt = options.get(f"cpp_{unit}_o") or ""
        if prebuilt and _has_digest(prebuilt, options.get(f"cpp_{unit}_o_sha256") or ""):
            found.append(prebuilt)
        else:
            found.append(os.path.join(HERE, "cpp", unit + ".cpp"))
    return found


def _has_digest(path: str, digest: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest() == digest
    except OSError:
        return False


# a first line that includes every standard header (a contest habit)
STDCXX_FIRST = re.compile(r"\A(?:[ \t]*\r?\n)*[ \t]*#[ \t]*include[ \t]*<bits/stdc\+\+\.h>[ \t]*(?:\r?\n|\Z)")


def cpp_candidate_header(code: str, options: dict[str, str]) -> str:
    """The header a candidate is compiled after: the parent's precompiled copy when there
    is one (g++ reads the .gch next to it), else the header itself. A candidate whose first
    line includes <bits/stdc++.h> gets the copy that holds that header too: g++ would read
    the same headers in the same order anyway, so its code sees the same names, for about
    half the compile's CPU (the header has no guard, but every header it includes has)."""
    if options.get("cpp_header_stdcxx") and STDCXX_FIRST.match(code):
        return options["cpp_header_stdcxx"]
    return options.get("cpp_header") or os.path.join(HERE, "cpp", "assay.hpp")


def java_class_name(code: str) -> str:
    public = re.search(
        r"^\s*public\s+(?:final\s+|abstract\s+)*(?:class|record|interface|enum)\s+(\w+)", code, re.M
    )
    if public:
        return public.group(1)
    main = re.search(r"\bclass\s+(\w+)", code)
    return main.group(1) if main else "Solution"


def javac_argv(options: dict[str, str]) -> list[str]:
    """javac in a small JVM; with the parent's archive of the classes javac loads (class
    data sharing) when there is one: mapped, not loaded and verified again each time. The
    JVM checks the archive and, where it does not fit, loads the classes as without it."""
    jvm = [f"-J{flag}" for flag in options["jvm_flags"].split()]
    if options.get("javac_archive") and _has_size(
        options["javac_archive"], options.get("javac_archive_bytes")
    ):
        jvm.append(f"-J-XX:SharedArchiveFile={options['javac_archive']}")
    return [options["javac"], *jvm, "-nowarn", "-encoding", "UTF-8"]


def _has_size(path: str, size: str | None) -> bool:
    """The archive has the size the parent saw it written with: the JVM maps it without
    checking the file's length, and one cut short would kill javac (SIGBUS)."""
    try:
        return str(os.stat(path).st_size) == size
    except OSError:
        return False


def build_java(role: str, code: str, entry: str, options: dict[str, str]) -> list[str]:
    name = java_class_name(code)
    _write(f"{name}.java", code)
    os.mkdir("classes")
    sources = [f"{name}.java"]
    prebuilt = options.get("java_classes") or ""
    if role == "candidate" and not prebuilt:
        sources += [
            os.path.join(HERE, "java", f)
            for f in ("AssayCandidate.java", "AssayJson.java", "AssayCodec.java")
        ]
    classpath = "classes" + (os.pathsep + prebuilt if role == "candidate" and prebuilt else "")
    jvm = options["jvm_flags"].split()
    compile_with([*javac_argv(options), "-cp", classpath, "-d", "classes", *sources], dict(os.environ))
    if role != "candidate":
        return [options["java"], *jvm, "-cp", classpath, name]
    opens = ["--add-opens", "java.base/java.io=ALL-UNNAMED"]
    return [options["java"], *jvm, *opens, "-cp", classpath, "AssayCandidate", entry]


RECIPES = {"go": build_go, "cpp": build_cpp, "java": build_java}
RUN_ENVIRONMENT = {"go": {"GOMAXPROCS": "2"}}  # fewer threads in the program too


# -- the checker role: the test program built against a typed proxy ------------------------
def check_cpp(setup: dict[str, object], options: dict[str, str]) -> list[str]:
    _write("checker.cpp", proxies.cpp_source(setup, os.path.join(HERE, "cpp", "assay_checker.hpp")))
    header = options.get("cpp_header") or os.path.join(HERE, "cpp", "assay.hpp")
    argv = [options["cxx"], "-std=c++17", "-O1", "-pipe", "-include", header, "-o", "checker"]
    harness = cpp_harness_code(options, "assay", "assay_checker")
    compile_with([*argv, "checker.cpp", *harness], dict(os.environ))
    return [os.path.join(os.getcwd(), "checker"), str(setup.get("max_value_bytes") or "")]


def check_java(setup: dict[str, object], options: dict[str, str]) -> list[str]:
    main, source, offset = proxies.java_source(setup)
    _write(f"{main}.java", source)
    os.mkdir("classes")
    prebuilt = options.get("java_classes") or ""
    sources = [f"{main}.java"]
    if not prebuilt:
        sources += [os.path.join(HERE, "java", f) for f in JAVA_CHECKER]
    classpath = "classes" + (os.pathsep + prebuilt if prebuilt else "")
    jvm = options["jvm_flags"].split()
    compile_with([*javac_argv(options), "-cp", classpath, "-d", "classes", *sources], dict(os.environ))
    opens = ["--add-opens", "java.base/java.io=ALL-UNNAMED"]
    limit = str(setup.get("max_value_bytes") or 0)
    return [options["java"], *jvm, *opens, "-cp", classpath, "AssayChecker", main, limit, str(offset)]


def check_go(setup: dict[str, object], options: dict[str, str]) -> list[str]:
    """A test binary (``go test -c``) of the test, the proxy, the prompt's helpers and the
    harness (harness/go/checker.go), with harness/go/assert under testify's import path.
    If the prompt's helpers do not compile with the test, it is built without them."""
    assert_package = os.path.join(".gopath", "src", "github.com", "stretchr", "testify", "assert")
    os.makedirs(assert_package)
    for name in ("assert.go", "forward.go"):
        shutil.copyfile(os.path.join(HERE, "go", "assert", name), os.path.join(assert_package, name))
    harness = {
        "frames.go": "assay_frames.go",
        "codec.go": "assay_codec.go",
        "checker.go": "assay_checker_test.go",
    }
    for source, target in harness.items():
        shutil.copyfile(os.path.join(HERE, "go", source), target)
    files = go_checker.sources(setup)
    for name, text in files.items():
        _write(name, text)
    # -vet=off: vet would take most of the build, and its findings are not test failures
    argv = [options["go"], "test", "-c", "-vet=off", "-o", "checker", "."]
    try:
        compile_with(argv, _go_env(options))
    except CompileFailed:
        if "assay_prompt.go" not in files:
            raise
        os.remove("assay_prompt.go")
        compile_with(argv, _go_env(options))
    _clean_build_files()
    return [os.path.join(os.getcwd(), "checker")]


def go_checker_environment(setup: dict[str, object]) -> None:
    os.environ["GOMAXPROCS"] = "2"
    os.environ["ASSAY_MAX_VALUE_BYTES"] = str(setup.get("max_value_bytes") or 0)


JAVA_CHECKER = ("AssayChecker.java", "AssayJson.java", "AssayCodec.java")
CHECKERS = {"cpp": check_cpp, "java": check_java, "go": check_go}


def checker_main(language: str, options: dict[str, str]) -> int:
    """Build the test program, then become it: its verdict goes to the parent on fd 4. A
    test program that does not compile is the dataset's fault: ``test_compile``."""
    setup = read_setup()
    if not isinstance(setup, dict):
        return 0 if setup is None else 2
    shared_build.seal(setup)
    shared, export = setup.get("shared"), _export_fd(setup)
    if isinstance(shared, dict) and isinstance(shared.get("error"), dict):
        frames.write_frame(FRAMES_OUT, shared["error"])  # this test program's, compiled before
        return 0
    argv = shared_build.reuse(shared)
    if argv is None:
        try:
            argv = CHECKERS[language](setup, options)
        except (CompileFailed, proxies.BadSetup) as failure:
            verdict = _test_compile_error(setup, failure)
            if export is not None and not getattr(failure, "signaled", False):
                shared_build.export_error(export, verdict)
            frames.write_frame(FRAMES_OUT, verdict)
            return 0
        if export is not None:
            shared_build.export_build(export, argv)
    if language == "go":
        go_checker_environment(setup)
    sys.stdout.flush()
    os.execve(argv[0], argv, dict(os.environ))
    return 127


def _test_compile_error(setup: dict[str, object], failure: Exception) -> dict[str, object]:
    declaration = setup.get("declaration")
    source = declaration.get("source", "") if isinstance(declaration, dict) else ""
    return {
        "passed": False,
        "stage": "test",
        "kind": "test_compile",
        "error_type": "CompileError",
        "message": "the test program does not compile:\n" + first_lines(str(failure)),
        "declaration_source": source,
    }


def _export_fd(setup: dict[str, object]) -> int | None:
    """The descriptor this compile's result goes to, for later jobs of the same bytes
    (see ``shared_build``): closed before any job code runs, whatever happens."""
    fd = setup.get("export_fd")
    if not isinstance(fd, int) or isinstance(fd, bool) or fd <= 4:
        return None
    try:
        os.set_inheritable(fd, False)  # never reaches the exec'd program
    except OSError:
        return None
    return fd


def _write(name: str, text: str) -> None:
    with open(name, "w", encoding="utf-8") as handle:
        handle.write(text)


# -- the build role: compile once, report the command that runs the built program ---------
def build_python(role: str, code: str, entry: str, options: dict[str, str]) -> list[str]:
    _write("main.py", code)
    return [sys.executable, "-I", "-B", os.path.join(os.getcwd(), "main.py")]


def build_javascript(role: str, code: str, entry: str, options: dict[str, str]) -> list[str]:
    _write("main.js", code)
    return [options["node"], os.path.join(os.getcwd(), "main.js")]


def absolute_classpath(argv: list[str]) -> list[str]:
    """The built program runs from another job folder: its class path, as seen from here."""
    fixed = list(argv)
    for index, part in enumerate(fixed[:-1]):
        if part == "-cp":
            paths = fixed[index + 1].split(os.pathsep)
            fixed[index + 1] = os.pathsep.join(os.path.join(os.getcwd(), p) for p in paths)
    return fixed


BUILDS = {**RECIPES, "python": build_python, "javascript": build_javascript}


def build_main(language: str, options: dict[str, str]) -> int:
    """Compile the program (a stdin/stdout candidate or a checker) and exit: its folder
    stays until the job ends, and each test runs the reported command in a new child."""
    setup = read_setup()
    if not isinstance(setup, dict):
        return 0 if setup is None else 2
    try:
        argv = BUILDS[language]("script", str(setup.get("code", "")), "", options)
    except CompileFailed as failure:
        frames.write_frame(FRAMES_OUT, _load_error("compile", "CompileError", first_lines(str(failure))))
        return 0
    _clean_build_files()
    frames.write_frame(FRAMES_OUT, {"event": "built", "argv": absolute_classpath(argv)})
    return 0


def main() -> int:
    language, role, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    if role == "checker":
        return checker_main(language, options)
    if role == "build":
        return build_main(language, options)
    setup = read_setup()
    if setup is None:
        return 0
    if not isinstance(setup, dict):
        return 2
    shared_build.seal(setup)
    entry = str(setup.get("func_name") or "")
    if role == "candidate" and not IDENTIFIER.match(entry):
        frames.write_frame(
            FRAMES_OUT, _load_error("missing_function", "NameError", f"{entry!r} is not an identifier")
        )
        return 0
    # a job whose processes may restart (test cases) keeps its build: see kept_build
    keeping = role == "candidate" and setup.get("keep_build") is True
    prebuilt = setup.get("prebuilt") if keeping else None
    argv = kept_build.reuse(language, prebuilt) if isinstance(prebuilt, str) else None
    compiled: dict[str, object] = {"event": "compiled"}
    if keeping:
        compiled["reused"] = argv is not None
    if argv is None:
        shared, export = setup.get("shared"), _export_fd(setup)
        if isinstance(shared, dict) and isinstance(shared.get("error"), dict):
            frames.write_frame(FRAMES_OUT, shared["error"])  # these sources', compiled before
            return 0
        argv = shared_build.reuse(shared)
        if shared is not None:  # offered: whether it checked out
            compiled["shared"] = argv is not None
        if argv is None:
            try:
                argv = RECIPES[language](role, str(setup.get("code", "")), entry, options)
            except CompileFailed as failure:
                text = first_lines(str(failure))
                if role == "script":
                    sys.stderr.write(f"compile error:\n{text}\n")
                    return 1
                error = _load_error("compile", "CompileError", text)
                if export is not None and not failure.signaled:
                    shared_build.export_error(export, error)
                frames.write_frame(FRAMES_OUT, error)
                return 0
            _clean_build_files()
            if export is not None:  # before any of its code runs
                shared_build.export_build(export, argv)
        if keeping:  # before any of its code runs
            compiled["build"] = kept_build.keep(language, argv)
    os.environ.update(RUN_ENVIRONMENT.get(language, {}))
    frames.write_frame(FRAMES_OUT, compiled)
    if read_setup() is None:  # the go-ahead (see RUN in sandbox/_jobs.py)
        return 0
    _clean_build_files()
    sys.stdout.flush()
    os.execve(argv[0], argv, dict(os.environ))
    return 127


def read_setup() -> object:
    """The next frame, read byte-exact: whatever follows it belongs to the program."""
    header = _read_exactly(frames.HEADER.size)
    if not header:
        return None
    (length,) = frames.HEADER.unpack(header)
    if length > frames.MAX_FRAME_BYTES:
        raise frames.FrameError(f"setup frame of {length} bytes")
    return frames.decode_body(_read_exactly(length))


def _read_exactly(size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(FRAMES_IN, size - len(data))
        if not chunk:
            if data:
                raise frames.FrameError("end of file inside the setup frame")
            return b""
        data += chunk
    return data


def _load_error(kind: str, error_type: str, message: str) -> dict[str, str]:
    return {
        "event": "load_error",
        "kind": kind,
        "error_type": error_type,
        "message": message,
        "traceback": "",
    }


def _clean_build_files() -> None:
    """The program needs only its binary (or classes): the compiler's caches go, so the
    job folder's size limit is the program's."""
    for folder in (".gocache", ".gopath"):
        shutil.rmtree(folder, ignore_errors=True)
