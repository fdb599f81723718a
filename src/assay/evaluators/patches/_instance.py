"""One instance's fields, read from the example and checked: the repository, the
environment, the tests that must start passing and keep passing, the hidden tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from assay.errors import EvaluatorInputError
from assay.evaluators.patches._environment import EnvironmentRecipe
from assay.evaluators.patches._snapshot import Snapshot
from assay.schemas import Example


@dataclass(frozen=True)
class Instance:
    snapshot: Snapshot
    recipe: EnvironmentRecipe
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    test_patch: str

    @property
    def tests(self) -> list[str]:
        return list(dict.fromkeys([*self.fail_to_pass, *self.pass_to_pass]))


def read_instance(example: Example | None, repository: Any, environment: Any) -> Instance:
    inputs = dict(example.inputs) if example is not None and example.inputs else {}
    outputs = dict(example.outputs) if example is not None and example.outputs else {}
    fields = {**inputs, **outputs}
    source = fields.get("repository", repository)
    if source is None:
        raise EvaluatorInputError(
            "no repository: give example.inputs['repository'] (a folder, an archive, or "
            "{'git': path, 'ref': commit}) or RepositoryPatchEvaluator(repository=...)"
        )
    fail_to_pass = _test_ids(fields.get("FAIL_TO_PASS"), "FAIL_TO_PASS")
    if not fail_to_pass:
        raise EvaluatorInputError("example.outputs['FAIL_TO_PASS'] must name at least one test")
    test_patch = fields.get("test_patch") or ""
    if not isinstance(test_patch, str):
        raise EvaluatorInputError("example.outputs['test_patch'] must be a unified diff (a string)")
    snapshot = Snapshot.of(source, "example.inputs['repository']")
    commit = fields.get("base_commit")
    if isinstance(commit, str) and commit and snapshot.ref is None:
        snapshot = Snapshot(snapshot.path, commit)  # SWE-bench's field: the checkout at that commit
    return Instance(
        snapshot=snapshot,
        recipe=EnvironmentRecipe.of(fields.get("environment", environment), "example.inputs['environment']"),
        fail_to_pass=fail_to_pass,
        pass_to_pass=_test_ids(fields.get("PASS_TO_PASS"), "PASS_TO_PASS"),
        test_patch=test_patch,
    )


def _test_ids(value: Any, name: str) -> tuple[str, ...]:
    """A list of pytest node ids (or, as SWE-bench stores them, a JSON string of one)."""
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise EvaluatorInputError(f"example.outputs[{name!r}] is a string but not a JSON list") from None
    if not isinstance(value, list):
        raise EvaluatorInputError(
            f"example.outputs[{name!r}] must be a list of test ids, got {type(value).__name__}"
        )
    for item in value:
        if not isinstance(item, str) or not item.strip() or item.startswith(("-", "/")) or "\0" in item:
            raise EvaluatorInputError(
                f"example.outputs[{name!r}] has {item!r:.100}: a test id is a pytest node id relative "
                "to the repository, like 'tests/test_x.py::test_y'"
            )
        if ".." in item.split("::", 1)[0].split("/"):
            raise EvaluatorInputError(
                f"example.outputs[{name!r}] has {item!r:.100}, which leaves the repository"
            )
    return tuple(value)
