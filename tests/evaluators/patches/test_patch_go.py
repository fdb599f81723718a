"""A Go module judged with ``go test -json``: resolved or not per test, the instance's
test files put back, and a new test file with a TestMain that exits 0 removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.schemas import Example

from ._calc import Judge, diff, new_file

pytestmark = pytest.mark.slow
SOURCE = "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\nfunc Mul(a, b int) int {\n\treturn a * b\n}\n"
VISIBLE = 'package calc\n\nimport "testing"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal("mul")\n\t}\n}\n'
HIDDEN = 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal("add")\n\t}\n}\n'
FIX = diff("calc.go", SOURCE, SOURCE.replace("a - b", "a + b"))


@pytest.fixture(scope="module")
def go_example(tmp_path_factory: pytest.TempPathFactory) -> Example:
    repo: Path = tmp_path_factory.mktemp("go-calc")
    (repo / "go.mod").write_text("module example.com/calc\n\ngo 1.19\n")
    (repo / "calc.go").write_text(SOURCE)
    (repo / "calc_test.go").write_text(VISIBLE)
    return Example(
        inputs={"repository": str(repo), "environment": {"runner": "go"}},
        outputs={
            "FAIL_TO_PASS": [".::TestAdd"],
            "PASS_TO_PASS": [".::TestMul"],
            "test_patch": new_file("hidden_test.go", HIDDEN),
        },
    )


@pytest.mark.parametrize("backend", ["bubblewrap", "unshare"])
def test_go_right_and_wrong(judge: Judge, go_example: Example, backend: str) -> None:
    right = judge(FIX, backend, example=go_example, test_timeout=120.0)
    assert right.score == 1, (right.comment, right.error, right.metadata.get("output"))
    assert right.metadata["tests"] == {".::TestAdd": "passed", ".::TestMul": "passed"}
    wrong = judge(
        diff("calc.go", SOURCE, SOURCE.replace("a - b", "a + b").replace("a * b", "a + b")),
        backend,
        example=go_example,
        test_timeout=120.0,
    )
    assert wrong.score == 0 and wrong.metadata["tests"][".::TestMul"] == "failed"


def test_a_new_test_main_exiting_0_is_removed(judge: Judge, go_example: Example) -> None:
    main = (
        'package calc\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n}\n'
    )
    result = judge(new_file("main_test.go", main), example=go_example, test_timeout=120.0)
    assert result.score == 0 and "main_test.go" in result.metadata["removed"]
    assert result.metadata["tests"][".::TestAdd"] == "failed"
