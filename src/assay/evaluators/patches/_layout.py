"""Which files of a snapshot are the instance's tests and test configuration (restored
over whatever a patch does to them), and which pytest configuration file it has."""

from __future__ import annotations

import configparser
import os
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TEST_FILE = re.compile(r"^(test_.*\.py|.*_test\.py|conftest\.py|.*_test\.go)$")
TEST_DIRS = {"tests", "test", "testing"}
CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def protected_files(tree: Path, test_patch_paths: list[str]) -> list[str]:
    """The snapshot's test files, ``conftest.py`` files and the test patch's paths."""
    found: set[str] = set(test_patch_paths)
    for directory, _dirs, files in os.walk(tree):
        relative = Path(directory).relative_to(tree)
        in_tests = bool(TEST_DIRS & set(relative.parts))
        for name in files:
            if in_tests or TEST_FILE.match(name):
                found.add((relative / name).as_posix())
    return sorted(found)


def test_dirs(tree: Path) -> list[str]:
    """Folders named like test folders: the patch may add nothing there."""
    found: list[str] = []
    for directory, dirs, _ in os.walk(tree):
        relative = Path(directory).relative_to(tree)
        found += [(relative / d).as_posix() for d in dirs if d in TEST_DIRS]
    return sorted(found)


def pytest_config(tree: Path) -> str | None:
    """The file pytest would read its configuration from, as pytest picks it."""
    for name in CONFIG_FILES:
        path = tree / name
        if not path.is_file():
            continue
        if name in ("pytest.ini", ".pytest.ini"):
            return name
        if name == "pyproject.toml" and "pytest" in _toml_tools(path):
            return name
        if name == "tox.ini" and _ini_has(path, "pytest"):
            return name
        if name == "setup.cfg" and _ini_has(path, "tool:pytest"):
            return name
    return None


def _toml_tools(path: Path) -> dict[str, object]:
    try:
        tools = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, ValueError):
        return {}
    return tools if isinstance(tools, dict) else {}


def _ini_has(path: Path, section: str) -> bool:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, configparser.Error):
        return False
    return parser.has_section(section)
