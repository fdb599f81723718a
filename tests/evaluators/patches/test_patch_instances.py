"""Every instance of our benchmark (bench/data/patches) end to end: its correct patch
resolves it, its wrong patch does not, and without a patch its FAIL_TO_PASS tests fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.evaluators.patches import read_instances
from assay.schemas import Example

from ._calc import Judge

pytestmark = pytest.mark.slow
FOLDER = Path(__file__).resolve().parents[3] / "bench" / "data" / "patches"
INSTANCES = read_instances(FOLDER)


def test_there_are_fifteen_or_more_small_instances() -> None:
    assert len(INSTANCES) >= 15
    size = sum(p.stat().st_size for p in FOLDER.rglob("*") if p.is_file())
    assert size < 2 * 1024 * 1024


@pytest.mark.parametrize("example", INSTANCES, ids=[e.inputs["instance_id"] for e in INSTANCES])
def test_the_correct_patch_resolves_and_the_wrong_one_does_not(judge: Judge, example: Example) -> None:
    outputs = dict(example.outputs or {})
    right = judge(outputs["patch"], example=example)
    assert right.score == 1, right.comment
    wrong = judge(outputs["wrong_patch"], example=example)
    assert wrong.score == 0 and wrong.error is None, wrong.comment
    assert "did not pass" in (wrong.comment or "")


@pytest.mark.parametrize("example", INSTANCES[:3], ids=[e.inputs["instance_id"] for e in INSTANCES[:3]])
def test_the_bug_is_real_the_hidden_tests_fail_before_the_fix(judge: Judge, example: Example) -> None:
    """A patch that only adds a comment file: every FAIL_TO_PASS test fails."""
    noop = "diff --git a/NOTES b/NOTES\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES\n@@ -0,0 +1 @@\n+notes\n"
    result = judge(noop, example=example)
    assert result.score == 0
    assert result.metadata["fail_to_pass"]["passed"] == 0
    assert result.metadata["pass_to_pass"]["passed"] == result.metadata["pass_to_pass"]["total"]
