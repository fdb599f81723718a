"""Reading a patch on the host (its size, its paths, a Markdown fence) in one bounded
pass, and the instance's fields checked with messages that say what to fix."""

from __future__ import annotations

from typing import Any

import pytest

from assay.errors import EvaluatorInputError
from assay.evaluators.patches._diff import measure, without_fences
from assay.evaluators.patches._instance import read_instance
from assay.schemas import Example

from ._calc import FIX, new_file


def test_the_size_counts_files_and_lines() -> None:
    size = measure(FIX + new_file("b.py", "x = 1\ny = 2\n"))
    assert (size.files, size.added, size.removed) == (2, 3, 1)
    assert size.paths == ["calc.py", "b.py"]


def test_a_plain_diff_without_git_headers_counts_its_files() -> None:
    plain = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert measure(plain).files == 2 and measure(plain).paths == ["x.py", "y.py"]


def test_measuring_is_linear_in_the_patch(assert_linear: Any) -> None:
    def many(count: int) -> str:
        return "".join(new_file(f"f{i}.py", "x = 1\n" * 5) for i in range(count))

    assert_linear(measure, many, 400)


def test_the_paths_kept_are_bounded() -> None:
    many = "".join(new_file(f"f{i}.py", "x\n") for i in range(3000))
    assert len(measure(many).paths) == 1000 and measure(many).files == 3000


def test_a_fence_is_removed() -> None:
    assert without_fences("```diff\n" + FIX + "```") == FIX
    assert without_fences(FIX) == FIX


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        ({}, "must name at least one test"),
        ({"FAIL_TO_PASS": "not json"}, "not a JSON list"),
        ({"FAIL_TO_PASS": ["-p evil"]}, "a pytest node id"),
        ({"FAIL_TO_PASS": ["../x.py::t"]}, "leaves the repository"),
        ({"FAIL_TO_PASS": ["t.py::t"], "test_patch": 3}, "must be a unified diff"),
    ],
)
def test_bad_instances_are_refused_with_the_reason(outputs: dict[str, Any], message: str) -> None:
    with pytest.raises(EvaluatorInputError, match=message):
        read_instance(Example(inputs={"repository": "/tmp"}, outputs=outputs), None, None)


def test_swe_bench_json_strings_are_read() -> None:
    instance = read_instance(
        Example(inputs={"repository": "/tmp"}, outputs={"FAIL_TO_PASS": '["a.py::t"]', "PASS_TO_PASS": "[]"}),
        None,
        None,
    )
    assert instance.tests == ["a.py::t"]
