"""Each language's formatter, as ``CodeStyleEvaluator`` runs it: the code on stdin, the
formatted code on stdout, with no configuration file of anyone's read (the style is the
tool's own default, named in docs/code.md).

google-java-format is neither a Debian nor an npm package: ``scripts/test`` puts its jars
(1.28.0 and the guava it declares) in ``~/.cache/assay/google-java-format`` at install
time (or ``ASSAY_GOOGLE_JAVA_FORMAT`` names the folder); the evaluator never fetches it.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from assay.errors import ToolMissingError
from assay.evaluators.code._tools import JVM_FLAGS, require_tool

__all__ = ["ALIASES", "FORMATTERS", "Formatter", "google_java_format_folder"]


@dataclass(frozen=True)
class Formatter:
    """How one language's formatter is run."""

    tool: str  # its name, in results and errors
    package: str  # what to install, for the error when it is missing
    argv: Callable[[str], list[str]]  # from what ``locate`` found
    locate: Callable[[Formatter, str], str] | None = None  # default: ``tool`` on PATH
    limit_memory: bool = True

    def command(self, language: str) -> list[str]:
        """The argv, or ToolMissingError naming what to install."""
        feature = f"the {language} style check"
        found = self.locate(self, feature) if self.locate else require_tool(self.tool, self.package, feature)
        return self.argv(found)


def _python_with_ruff(formatter: Formatter, feature: str) -> str:
    if importlib.util.find_spec("ruff") is None:
        raise ToolMissingError(f"{feature} needs ruff, which is not installed: {formatter.package}")
    return sys.executable


def _ruff(python: str) -> list[str]:
    return [
        python,
        "-m",
        "ruff",
        "format",
        "--isolated",
        "--no-cache",
        "--stdin-filename",
        "solution.py",
        "-",
    ]


def _prettier(filename: str) -> Callable[[str], list[str]]:
    return lambda path: [path, "--no-config", "--no-editorconfig", "--stdin-filepath", filename]


def google_java_format_folder() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("ASSAY_GOOGLE_JAVA_FORMAT") or os.path.join(base, "assay", "google-java-format")


def _java_format_jars() -> list[str]:
    return sorted(glob.glob(os.path.join(google_java_format_folder(), "*.jar")))


def _java_with_format(formatter: Formatter, feature: str) -> str:
    java = require_tool("java", "apt-get install default-jdk-headless", feature)
    if not any(os.path.basename(j).startswith("google-java-format") for j in _java_format_jars()):
        raise ToolMissingError(
            f"{feature} needs google-java-format, which is not installed in "
            f"{google_java_format_folder()}: {formatter.package}"
        )
    return java


# google-java-format uses javac's parser, which Java 17 keeps in a module it does not export
_JAVAC_EXPORTS = [
    f"--add-exports=jdk.compiler/com.sun.tools.javac.{name}=ALL-UNNAMED"
    for name in ("api", "code", "file", "parser", "tree", "util")
]


def _google_java_format(java: str) -> list[str]:
    classpath = os.pathsep.join(_java_format_jars())
    return [java, *JVM_FLAGS, *_JAVAC_EXPORTS, "-cp", classpath, "com.google.googlejavaformat.java.Main", "-"]


FORMATTERS: dict[str, Formatter] = {
    "python": Formatter("ruff format", "pip install 'assay[code]' (ruff)", _ruff, _python_with_ruff),
    "go": Formatter("gofmt", "apt-get install golang-go", lambda path: [path], limit_memory=False),
    "javascript": Formatter("prettier", "npm install -g prettier", _prettier("solution.js")),
    "typescript": Formatter("prettier", "npm install -g prettier", _prettier("solution.ts")),
    "cpp": Formatter(
        "clang-format",
        "apt-get install clang-format",
        lambda path: [path, "--style=LLVM", "--assume-filename=solution.cpp"],
    ),
    "java": Formatter(
        "google-java-format",
        "run scripts/test, which copies google-java-format 1.28.0 and guava 32.1.3 there "
        "(from Maven: com.google.googlejavaformat:google-java-format:1.28.0)",
        _google_java_format,
        _java_with_format,
    ),
}
ALIASES = {"py": "python", "golang": "go", "js": "javascript", "ts": "typescript", "c++": "cpp"}
