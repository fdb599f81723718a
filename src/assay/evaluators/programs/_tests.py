"""Tests of a stdin/stdout problem from an example, in the shapes benchmarks publish:

- ``tests``: a list of ``{"input": ..., "output": ...}`` (or ``input_file`` and
  ``output_file``: paths on this machine, streamed, never read whole);
- ``{"inputs": [...], "outputs": [...]}`` (APPS; also as the JSON text of its
  ``input_output`` field);
- CodeContests' ``public_tests``, ``private_tests`` and ``generated_tests``, each
  ``{"input": [...], "output": [...]}``.

They are looked for in the example's inputs, then its outputs (the reference side)."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from assay.errors import CaseError

CONTESTS_SPLITS = ("public_tests", "private_tests", "generated_tests")
SHAPES = "'tests' (a list of {input, output}), {'inputs': [...], 'outputs': [...]}, 'input_output' or CodeContests' public/private/generated_tests"


@dataclass(frozen=True)
class Source:
    """Bytes given inline, or a file opened when a test runs."""

    data: bytes | None = None
    path: str | None = None

    def open(self) -> BinaryIO:
        if self.path is not None:
            return open(self.path, "rb")
        return io.BytesIO(self.data or b"")

    @classmethod
    def of(cls, value: Any, where: str) -> Source:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "\n".join(value) + "\n"  # APPS: lines
        if isinstance(value, str):
            return cls(data=value.encode())
        if isinstance(value, bytes):
            return cls(data=value)
        raise CaseError(f"{where} must be text, got {type(value).__name__}", "Malformed tests.")

    @classmethod
    def file(cls, value: Any, where: str) -> Source:
        if not isinstance(value, str) or not os.path.isfile(value):
            raise CaseError(f"{where} names no readable file: {value!r}", "Malformed tests.")
        return cls(path=value)


@dataclass(frozen=True)
class StdioTest:
    index: int
    input: Source
    output: Source


def read_tests(inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> list[StdioTest]:
    for side in (inputs, outputs):
        found = _tests_in(side)
        if found is not None:
            if not found:
                raise CaseError("the example's tests are empty", "No tests.")
            return found
    raise CaseError(f"the example has no tests: give {SHAPES}", "Missing tests.")


def _tests_in(side: Mapping[str, Any]) -> list[StdioTest] | None:
    if "tests" in side:
        return _from_value(side["tests"], "tests")
    if "input_output" in side:
        value = side["input_output"]
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise CaseError(f"input_output is not JSON: {exc}", "Malformed tests.") from exc
        return _from_value(value, "input_output")
    if "inputs" in side and "outputs" in side:
        return _parallel(side["inputs"], side["outputs"], "inputs/outputs")
    splits = [name for name in CONTESTS_SPLITS if isinstance(side.get(name), Mapping)]
    if splits:
        tests: list[StdioTest] = []
        for name in splits:
            split = side[name]
            tests += _parallel(split.get("input"), split.get("output"), name, start=len(tests))
        return tests
    return None


def _from_value(value: Any, where: str) -> list[StdioTest]:
    if isinstance(value, Mapping) and "inputs" in value:
        return _parallel(value.get("inputs"), value.get("outputs"), where)
    if not isinstance(value, list):
        raise CaseError(
            f"{where} must be a list of {{input, output}}, got {type(value).__name__}", "Malformed tests."
        )
    return [_one(item, index, f"{where}[{index}]") for index, item in enumerate(value)]


def _one(item: Any, index: int, where: str) -> StdioTest:
    if not isinstance(item, Mapping):
        raise CaseError(f"{where} must be an object with input and output", "Malformed tests.")
    if "input_file" in item or "output_file" in item:
        return StdioTest(
            index,
            Source.file(item.get("input_file"), f"{where}.input_file"),
            Source.file(item.get("output_file"), f"{where}.output_file"),
        )
    if "input" not in item or "output" not in item:
        raise CaseError(
            f"{where} needs 'input' and 'output' (or input_file and output_file)", "Malformed tests."
        )
    return StdioTest(
        index, Source.of(item["input"], f"{where}.input"), Source.of(item["output"], f"{where}.output")
    )


def _parallel(ins: Any, outs: Any, where: str, start: int = 0) -> list[StdioTest]:
    if not isinstance(ins, list) or not isinstance(outs, list):
        raise CaseError(f"{where}: inputs and outputs must be lists", "Malformed tests.")
    if len(ins) != len(outs):
        raise CaseError(f"{where}: {len(ins)} inputs but {len(outs)} outputs", "Malformed tests.")
    return [
        StdioTest(start + i, Source.of(a, f"{where} input {i}"), Source.of(b, f"{where} output {i}"))
        for i, (a, b) in enumerate(zip(ins, outs))
    ]
