"""The documentation site: its CLI page matches the parser, and it builds with --strict."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli._main import _parser
from assay.cli.reference import render

ROOT = Path(__file__).resolve().parents[2]


def test_the_cli_page_is_what_the_parser_says() -> None:
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == render(_parser()), "regenerate: python -m assay.cli.reference > docs/cli.md"


def test_the_cli_page_names_every_command_and_option() -> None:
    page = render(_parser())
    for command in ("run", "rescore", "compare", "show", "ui", "datasets", "experiments", "serve-evaluators"):
        assert f"## `assay {command}`" in page
    for option in ("`--fail-under METRIC=N[@lower]`", "`--shard I/N`", "`--max-regression METRIC=D`"):
        assert option in page


def test_every_page_is_in_the_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").rglob("*.md")):
        name = page.relative_to(ROOT / "docs").as_posix()
        assert f": {name}\n" in config, f"docs/{name} is not in mkdocs.yml's nav"


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "cli" / "index.html").exists()
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert "max_concurrency" in api  # the reference is read from the docstrings and signatures
