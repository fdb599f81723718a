"""A folder of instances, one sub-folder each: ``repo/`` (the repository at the buggy
commit) and ``instance.json`` (SWE-bench's field names: ``instance_id``,
``problem_statement``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``, ``test_patch``, ``patch``, and
optionally ``environment``), read as examples for ``RepositoryPatchEvaluator``."""

from __future__ import annotations

import json
from pathlib import Path

from assay.errors import EvaluatorInputError
from assay.schemas import Example

REFERENCE_FIELDS = ("FAIL_TO_PASS", "PASS_TO_PASS", "test_patch", "patch", "wrong_patch")


def read_instances(folder: str | Path) -> list[Example]:
    """One example per instance, sorted by folder name: inputs hold the repository, the
    environment and the problem statement; outputs the tests and the patches."""
    root = Path(folder)
    found = sorted(p.parent for p in root.glob("*/instance.json"))
    if not found:
        raise EvaluatorInputError(f"{root} has no instances (sub-folders with an instance.json)")
    return [_example(path) for path in found]


def _example(path: Path) -> Example:
    try:
        fields = json.loads((path / "instance.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvaluatorInputError(f"{path / 'instance.json'}: {exc}") from None
    if not (path / "repo").is_dir():
        raise EvaluatorInputError(f"{path} has no repo/ folder (the repository at the instance's commit)")
    inputs = {
        "instance_id": fields.get("instance_id", path.name),
        "problem_statement": fields.get("problem_statement", ""),
        "repository": str(path / "repo"),
    }
    if "environment" in fields:
        inputs["environment"] = fields["environment"]
    outputs = {key: fields[key] for key in REFERENCE_FIELDS if key in fields}
    return Example(inputs=inputs, outputs=outputs)
