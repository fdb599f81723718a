"""Every file the package needs at run time beside its Python modules goes into a wheel:
the sandbox's harness sources of the compiled languages (a wheel without them had no C++,
Go or Java harness to compile)."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "assay"


def test_the_package_data_holds_every_harness_file() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "assay"
    ]
    harness = PACKAGE / "sandbox" / "harness"
    needed = [p for p in harness.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")]
    assert any(p.suffix == ".cpp" for p in needed) and any(p.suffix == ".go" for p in needed)
    left_out = [
        str(p.relative_to(PACKAGE))
        for p in needed
        if not any(p.relative_to(PACKAGE).match(g) for g in patterns)
    ]
    assert left_out == [], left_out
