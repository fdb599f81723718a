"""The evaluator end to end on a small repository: resolved or not, per-test outcomes,
the patch's size, what does not apply, and the instance's own tests put back."""

from __future__ import annotations

import pytest

from ._calc import CALC, FIX, FIXED, VISIBLE, Judge, deleted_file, diff, new_file

pytestmark = pytest.mark.slow


def test_a_correct_patch_resolves_with_per_test_outcomes(judge: Judge) -> None:
    result = judge(FIX)
    assert result.score == 1, result.comment
    meta = result.metadata
    assert meta["tests"] == {
        "tests/test_hidden.py::test_add": "passed",
        "tests/test_calc.py::test_mul": "passed",
    }
    assert meta["fail_to_pass"] == {"passed": 1, "total": 1} and meta["pass_to_pass"] == {
        "passed": 1,
        "total": 1,
    }
    assert meta["patch"] == {"files": 1, "lines_added": 1, "lines_removed": 1, "bytes": len(FIX)}
    assert meta["seconds"] > 0 and meta["test_seconds"] > 0


def test_a_patch_breaking_a_passing_test_is_not_resolved(judge: Judge) -> None:
    broken = diff("calc.py", CALC, FIXED.replace("a * b", "a ** b"))
    result = judge(broken)
    assert result.score == 0
    assert result.metadata["tests"]["tests/test_calc.py::test_mul"] == "failed"
    assert result.metadata["pass_to_pass"] == {"passed": 0, "total": 1}
    assert "tests/test_calc.py::test_mul (failed)" in (result.comment or "")


def test_a_patch_that_does_not_apply_scores_0_with_gits_message(judge: Judge) -> None:
    stale = diff("calc.py", CALC.replace("a - b", "a // b"), FIXED)
    result = judge(stale)
    assert result.score == 0 and result.error is None
    assert "does not apply" in (result.comment or "") and "calc.py" in result.metadata["apply_message"]


def test_a_fenced_patch_is_read_from_its_fence(judge: Judge) -> None:
    assert judge(f"Here is the fix:\n```diff\n{FIX}```\n".split("\n", 1)[1]).score == 1


def test_an_empty_patch_scores_0_without_a_sandbox(judge: Judge) -> None:
    result = judge("   \n")
    assert result.score == 0 and result.comment == "the patch is empty"


def test_changed_tests_are_put_back(judge: Judge) -> None:
    """The patch makes the visible test trivial and deletes nothing else: the instance's
    test runs as it was, so a patch that breaks mul is caught all the same."""
    cheat = diff("calc.py", CALC, FIXED.replace("a * b", "0")) + diff(
        "tests/test_calc.py", VISIBLE, VISIBLE.replace("mul(2, 3) == 6", "True")
    )
    result = judge(cheat)
    assert result.score == 0 and result.metadata["tests"]["tests/test_calc.py::test_mul"] == "failed"


def test_deleted_tests_are_put_back(judge: Judge) -> None:
    result = judge(
        diff("calc.py", CALC, FIXED.replace("a * b", "0")) + deleted_file("tests/test_calc.py", VISIBLE)
    )
    assert result.score == 0 and result.metadata["tests"]["tests/test_calc.py::test_mul"] == "failed"


def test_a_hidden_test_file_the_patch_wrote_first_is_replaced(judge: Judge) -> None:
    """The patch creates the hidden test's file itself, with a test that always passes:
    it is removed (new in the tests' folder) before the hidden tests are applied."""
    fake = "def test_add():\n    assert True\n"
    result = judge(new_file("tests/test_hidden.py", fake))
    assert result.score == 0, result.comment
    assert result.metadata["tests"]["tests/test_hidden.py::test_add"] == "failed"
    assert "tests/test_hidden.py" in result.metadata["removed"]
