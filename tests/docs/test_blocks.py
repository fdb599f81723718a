"""Every fenced ```python block of README.md and docs/*.md runs, in order, as written.

The blocks of one document run as one session (later blocks use the names earlier ones
define), in a fresh working directory, with the judge model pointed at the loopback
OpenAI server and the embeddings at the bundled local model. Two HTML comments, invisible
on the rendered page, may precede a block:

    <!-- setup: python code -->                 run first: what a fragment takes as given
                                                 (``app``, ``my_model``, a database file)
    <!-- needs: remote-model: the reason -->    not run; reported as a skip with the reason
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.testing import FakeOpenAIServer, RecordedRequest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REMOTE = "remote-model"
_COMMENT = re.compile(r"<!--\s*(setup|needs):(.*?)-->", re.S)


@dataclass(frozen=True)
class Block:
    document: Path
    line: int  # of the opening fence
    code: str
    setup: str
    needs: str | None  # "remote-model: <reason>"

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def blocks_of(document: Path) -> list[Block]:
    """The python blocks, each with the setup / needs comments right above it."""
    lines = document.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index, pending = 0, ""
    while index < len(lines):
        line = lines[index]
        if line.strip() == "```python":
            end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == "```")
            found.append(_block(document, index + 1, "\n".join(lines[index + 1 : end]), pending))
            index, pending = end + 1, ""
            continue
        if line.startswith("<!--"):
            end = next(i for i in range(index, len(lines)) if "-->" in lines[i])
            pending += "\n".join(lines[index : end + 1]) + "\n"
            index = end + 1
            continue
        if line.strip():
            pending = ""  # a comment applies only to the block right after it
        index += 1
    return found


def _block(document: Path, line: int, code: str, comments: str) -> Block:
    setup, needs = "", None
    for kind, body in _COMMENT.findall(comments):
        if kind == "setup":
            setup += body.strip("\n") + "\n"
        else:
            needs = body.strip()
    return Block(document, line, code + "\n", setup, needs)


BLOCKS = {doc.name: blocks_of(doc) for doc in DOCUMENTS}


def test_every_fence_is_seen() -> None:
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        fences = sum(1 for line in text.splitlines() if line.strip() == "```python")
        assert len(BLOCKS[document.name]) == fences
    assert sum(len(blocks) for blocks in BLOCKS.values()) >= 18


def test_only_remote_model_blocks_are_marked_and_each_says_why() -> None:
    for blocks in BLOCKS.values():
        for block in blocks:
            if block.needs is not None:
                kind, _, reason = block.needs.partition(":")
                assert kind.strip() == REMOTE, f"{block.where}: unknown need {block.needs!r}"
                assert reason.strip(), f"{block.where}: say why the block needs a remote model"


def _synthesize(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A small instance of a JSON schema: what a cooperative model would answer."""
    if "$ref" in schema:
        return _synthesize(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for combinator in ("anyOf", "oneOf", "allOf"):
        if combinator in schema:
            return _synthesize(schema[combinator][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: _synthesize(properties[name], defs) for name in properties}
    if kind == "array":
        return [_synthesize(schema.get("items", {}), defs)]
    return {"integer": 1, "number": 1.0, "boolean": True, "null": None}.get(str(kind), "ok")


def cooperative_judge(request: RecordedRequest) -> Any:
    schema = request.schema
    if schema is None:
        return json.dumps({"reasoning": "ok", "value": "Y"})
    return _synthesize(schema, schema.get("$defs", {}))


def _doc_params() -> list[Any]:
    return [pytest.param(name, id=name) for name, blocks in BLOCKS.items() if blocks]


@pytest.mark.slow
@pytest.mark.parametrize("name", _doc_params())
def test_the_python_blocks_of_a_document_run(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for variable in ("ASSAY_DATABASE_URL", "ASSAY_JUDGE_CACHE", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("ASSAY_EMBEDDINGS", "local")
    with FakeOpenAIServer(handler=cooperative_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("ASSAY_JUDGE_MODEL", "openai/doc-judge")
        namespace: dict[str, Any] = {"__name__": "__doc__"}
        for block in BLOCKS[name]:
            if block.needs is not None:
                continue  # reported by test_remote_model_blocks_are_skipped_with_their_reason
            try:
                if block.setup:
                    exec(compile(block.setup, f"{block.where} (setup)", "exec"), namespace)
                exec(compile(block.code, block.where, "exec"), namespace)
            except Exception as exc:
                pytest.fail(f"the block at {block.where} failed: {type(exc).__name__}: {exc}")
    assert os.getcwd() == str(tmp_path)


REMOTE_BLOCKS = [b for blocks in BLOCKS.values() for b in blocks if b.needs is not None]


@pytest.mark.parametrize("block", REMOTE_BLOCKS, ids=[b.where for b in REMOTE_BLOCKS])
def test_remote_model_blocks_are_skipped_with_their_reason(block: Block) -> None:
    compile(block.code, block.where, "exec")  # it is still valid Python
    pytest.skip(f"{block.where} needs {block.needs}")
