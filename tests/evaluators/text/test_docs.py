"""The Python examples of docs/text.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "text.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_doc_has_examples() -> None:
    assert len(BLOCKS) == 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {}
    exec(compile(BLOCKS[index], f"{DOC.name}[python block {index}]", "exec"), namespace)
    if "results" in namespace:  # the usage example: every evaluator scored both rows
        rows = list(namespace["results"])  # type: ignore[call-overload]
        assert len(rows) == 2
        for row in rows:
            assert all(r.error is None for r in row["evaluation_results"]["results"])
