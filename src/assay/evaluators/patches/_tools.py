"""pytest for the sandbox, compiled: assay's sandbox site holds the test tools' sources
only (no ``__pycache__``), and a read-only mount cannot keep what the interpreter
compiles, so every run would compile pytest again (seconds on a loaded machine). This
copy, made once into the cache, carries bytecode the interpreter uses without checking
the sources (``UNCHECKED_HASH``: the copy never changes)."""

from __future__ import annotations

import compileall
import os
import py_compile
import shutil
from pathlib import Path

from assay.evaluators.patches._cache import build_once, digest
from assay.sandbox import TEST_TOOLS, sandbox_site


def compiled_tools(root: Path) -> str:
    site = sandbox_site(TEST_TOOLS, required=("pytest",))
    target = root / "tools" / ("tools-" + digest(site.path))
    build_once(target, lambda staging: _compile(Path(site.path), staging))
    return str(target)


def _compile(source: Path, staging: Path) -> None:
    shutil.copytree(source, staging, dirs_exist_ok=True, copy_function=_link_or_copy)
    compileall.compile_dir(
        staging, quiet=1, workers=1, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
