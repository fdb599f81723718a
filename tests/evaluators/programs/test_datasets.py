"""Tests in the shapes benchmarks publish, and clear errors for malformed ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import CaseError
from assay.evaluators.programs._tests import read_tests


def read(tests: list) -> list[tuple[bytes, bytes]]:  # type: ignore[type-arg]
    pairs = []
    for test in tests:
        with test.input.open() as i, test.output.open() as o:
            pairs.append((i.read(), o.read()))
    return pairs


def test_a_list_of_input_output_pairs() -> None:
    tests = read_tests({"tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "", "output": "0"}]}, {})
    assert read(tests) == [(b"1 2\n", b"3\n"), (b"", b"0")]


def test_apps_input_output_as_json_text_with_lines() -> None:
    field = json.dumps({"inputs": ["1\n", ["2", "3"]], "outputs": ["1\n", "5\n"]})
    assert read(read_tests({"input_output": field}, {})) == [(b"1\n", b"1\n"), (b"2\n3\n", b"5\n")]


def test_codecontests_splits_in_order() -> None:
    example = {
        "public_tests": {"input": ["a"], "output": ["A"]},
        "private_tests": {"input": ["b"], "output": ["B"]},
        "generated_tests": {"input": ["c"], "output": ["C"]},
    }
    tests = read_tests(example, {})
    assert [t.index for t in tests] == [0, 1, 2]
    assert read(tests) == [(b"a", b"A"), (b"b", b"B"), (b"c", b"C")]


def test_tests_on_the_reference_side() -> None:
    assert read(read_tests({}, {"inputs": ["x"], "outputs": ["y"]})) == [(b"x", b"y")]


def test_files_are_streamed_from_disk(tmp_path: Path) -> None:
    (tmp_path / "1.in").write_bytes(b"big input")
    (tmp_path / "1.out").write_bytes(b"big output")
    tests = read_tests(
        {"tests": [{"input_file": str(tmp_path / "1.in"), "output_file": str(tmp_path / "1.out")}]}, {}
    )
    assert tests[0].input.data is None  # not read until the test runs
    assert read(tests) == [(b"big input", b"big output")]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({}, "the example has no tests"),
        ({"tests": []}, "tests are empty"),
        ({"tests": [{"input": "1"}]}, r"tests\[0\] needs 'input' and 'output'"),
        ({"tests": [{"input": 1, "output": "1"}]}, r"tests\[0\].input must be text, got int"),
        ({"inputs": ["1", "2"], "outputs": ["1"]}, "2 inputs but 1 outputs"),
        ({"input_output": "{not json"}, "input_output is not JSON"),
        (
            {"tests": [{"input_file": "/nonexistent/1.in", "output_file": "x"}]},
            r"input_file names no readable file",
        ),
    ],
)
def test_malformed_tests_say_where(inputs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(CaseError, match=message):
        read_tests(inputs, {})
