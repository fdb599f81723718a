"""What parts of the suite need from the machine, one marker each: ``postgres``, ``ray``,
``browser``, ``podman``, ``toolchains``.

A test that needs a missing requirement is skipped locally, with the reason and the install
line; in CI (``ASSAY_CI=1``, set by ``.ci/run``) it fails instead, so CI cannot pass by
skipping. Tests are marked by the fixtures they use (a PostgreSQL store, the Ray cluster,
the browser) or, for whole files, by ``FILES`` below.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def _postgres() -> bool:
    return bool(glob.glob("/usr/lib/postgresql/*/bin/initdb")) or shutil.which("initdb") is not None


def _ray() -> bool:
    return importlib.util.find_spec("ray") is not None


def _browser() -> bool:
    return os.access("/usr/bin/chromium", os.X_OK) and importlib.util.find_spec("playwright") is not None


def _podman() -> bool:
    return shutil.which("podman") is not None


def _toolchains() -> bool:
    return all(shutil.which(tool) for tool in ("go", "javac", "g++", "node"))


#: marker -> (is it there?, what to install)
REQUIREMENTS: dict[str, tuple[Callable[[], bool], str]] = {
    "postgres": (_postgres, "PostgreSQL (apt install postgresql)"),
    "ray": (_ray, "Ray (pip install 'assay[ray]')"),
    "browser": (_browser, "Chromium and Playwright (apt install chromium; pip install playwright)"),
    "podman": (_podman, "podman (apt install podman runc debootstrap)"),
    "toolchains": (_toolchains, "the compilers (apt install golang-go default-jdk-headless g++ nodejs)"),
}

#: fixtures that mean a requirement
FIXTURES = {
    "postgres_server_url": "postgres",
    "postgres_store_url": "postgres",
    "local_cluster": "ray",
    "ray_cluster": "ray",
    "browser": "browser",
    "page": "browser",
}

#: files whose every test needs a requirement (by file name under tests/)
FILES = {
    "service/test_container.py": "podman",
    "sandbox/test_compiled_languages.py": "toolchains",
    "sandbox/test_go_programs.py": "toolchains",
    "sandbox/test_go_declarations.py": "toolchains",
    "sandbox/test_hostile_program_languages.py": "toolchains",
    "evaluators/patches/test_patch_go.py": "toolchains",
}

TESTS = Path(__file__).resolve().parent


def needs_of(item: pytest.Item) -> set[str]:
    """The requirements of one collected test."""
    needs = {FIXTURES[name] for name in getattr(item, "fixturenames", ()) if name in FIXTURES}
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "postgres" in (
        callspec.params.get("store_url"),
        callspec.params.get("module_store_url"),
    ):
        needs.add("postgres")
    try:
        relative = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
    except ValueError:
        relative = ""
    if relative in FILES:
        needs.add(FILES[relative])
    needs.update(mark.name for mark in item.iter_markers() if mark.name in REQUIREMENTS)
    return needs


def configure(config: pytest.Config) -> None:
    for name, (_, install) in REQUIREMENTS.items():
        config.addinivalue_line("markers", f"{name}: needs {install}; skipped without it, failed in CI")


def mark(items: list[pytest.Item]) -> None:
    for item in items:
        for need in sorted(needs_of(item)):
            item.add_marker(getattr(pytest.mark, need))


def check(item: pytest.Item) -> None:
    """Skip (locally) or fail (in CI) a test whose requirement is missing."""
    missing = [
        n
        for n in sorted({m.name for m in item.iter_markers()} & set(REQUIREMENTS))
        if not REQUIREMENTS[n][0]()
    ]
    if not missing:
        return
    reason = "; ".join(f"needs {REQUIREMENTS[n][1]}" for n in missing)
    if os.environ.get("ASSAY_CI") == "1":
        pytest.fail(f"CI must run this test, but it {reason}", pytrace=False)
    pytest.skip(reason)
