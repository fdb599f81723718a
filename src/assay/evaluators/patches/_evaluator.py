"""``RepositoryPatchEvaluator``: does a candidate patch resolve a repository instance?

The SWE-bench way, without a container image per instance: the repository snapshot and
its environment are built once into a cache the sandbox mounts read-only; each patch is
applied to a fresh copy inside the sandbox, the instance's tests are put back over
anything the patch did to them, and the named tests run with per-test outcomes.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay.evaluation.evaluator import BaseEvaluator
from assay.evaluators._fields import as_text, pick
from assay.evaluators.patches import _cache, _layout
from assay.evaluators.patches._diff import MAX_PATCH_BYTES, measure, without_fences
from assay.evaluators.patches._environment import BuiltEnvironment, build_environment
from assay.evaluators.patches._instance import Instance, read_instance
from assay.evaluators.patches._tools import compiled_tools
from assay.evaluators.patches._verdict import Verdict, verdict_of
from assay.sandbox import Limits, SandboxConfig, get_language, get_pool
from assay.schemas import EvaluationResult, Example, Run

SCRIPT = (Path(__file__).with_name("_in_sandbox.py")).read_text(encoding="utf-8")
PLACEHOLDER = 'PAYLOAD: dict[str, Any] = globals().get("PAYLOAD", {})'
assert PLACEHOLDER in SCRIPT
WORKDIR_BYTES = 512 * 1024 * 1024
SHOWN_TESTS = 500


class RepositoryPatchEvaluator(BaseEvaluator):
    """Score a patch (the run's output, a unified diff) 1 when it resolves the instance.

    The example names the repository (``inputs["repository"]``: a folder, an archive, or
    ``{"git": path, "ref": commit}``), its environment (``inputs["environment"]``, see
    ``EnvironmentRecipe``), and in its outputs the tests: ``FAIL_TO_PASS`` (must pass
    after the patch), ``PASS_TO_PASS`` (must keep passing) and ``test_patch`` (the hidden
    tests, applied after the candidate's patch). ``repository`` and ``environment`` here
    are used when the example has none.

    Args:
        test_timeout: seconds for the test run (then unfinished tests do not pass).
        max_patch_bytes: a longer patch scores 0 unread.
        output_key: where the patch is in ``run.outputs`` (default ``"output"``).
        sandbox, limits: as for the other code evaluators.
    """

    direction = "higher"
    score_range = (0, 1)

    def __init__(
        self,
        name: str = "patch_resolved",
        *,
        repository: Any = None,
        environment: Any = None,
        test_timeout: float = 300.0,
        apply_timeout: float = 60.0,
        max_patch_bytes: int = MAX_PATCH_BYTES,
        output_key: str | None = None,
        sandbox: SandboxConfig | None = None,
        limits: Limits | None = None,
    ) -> None:
        super().__init__(name=name)
        if test_timeout <= 0 or apply_timeout <= 0 or max_patch_bytes <= 0:
            raise ValueError("test_timeout, apply_timeout and max_patch_bytes must be positive")
        self.repository, self.environment = repository, environment
        self.test_timeout, self.apply_timeout = test_timeout, apply_timeout
        self.max_patch_bytes = max_patch_bytes
        self.output_key = output_key
        self.sandbox_config = sandbox or SandboxConfig()
        self.limits = limits or Limits()

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        started = time.monotonic()
        instance = read_instance(example, self.repository, self.environment)
        raw = as_text(pick(run.outputs, self.output_key, where="run.outputs", option="output_key"))
        if len(raw) > self.max_patch_bytes:
            return self._result(
                Verdict(False, f"the patch is over {self.max_patch_bytes} bytes"), {}, started
            )
        patch = without_fences(raw)
        size = measure(patch)
        if not patch.strip():
            return self._result(Verdict(False, "the patch is empty"), {"patch": size.as_dict()}, started)
        root = _cache.cache_root()
        key, tree = instance.snapshot.materialize(root)
        environment = build_environment(instance.recipe, key, tree, root)
        verdict = self._run(instance, tree, environment, patch, root)
        extra = {
            "patch": size.as_dict(),
            "environment": {
                "key": environment.key,
                "built_now": environment.built_now,
                "build_seconds": round(environment.build_seconds, 3),
            },
            "repository": key,
        }
        return self._result(verdict, extra, started)

    def _run(
        self, instance: Instance, tree: Path, environment: BuiltEnvironment, patch: str, root: Path
    ) -> Verdict:
        tools = compiled_tools(root)
        payload = {
            "snapshot": str(tree),
            "site_paths": [*environment.site_paths, tools],
            "patch": patch,
            "test_patch": instance.test_patch,
            "tests": instance.tests,
            "protected": _layout.protected_files(tree, measure(instance.test_patch).paths),
            "test_dirs": _layout.test_dirs(tree),
            "config": _layout.pytest_config(tree),
            "python_paths": _python_paths(instance, tree),
            "runner": instance.recipe.runner,
            "test_timeout": self.test_timeout,
            "apply_timeout": self.apply_timeout,
        }
        script = SCRIPT.replace(PLACEHOLDER, f"PAYLOAD = json.loads({json.dumps(payload)!r})", 1)
        pool = get_pool(self._config(root, environment))
        timeout = self.test_timeout + 2 * self.apply_timeout + 60.0
        done = pool.run_script(get_language("python"), script, timeout, self.limits)
        verdict = verdict_of(done, instance)
        verdict.details["sandbox"] = done.sandbox
        return verdict

    def _config(self, root: Path, environment: BuiltEnvironment) -> SandboxConfig:
        base = self.sandbox_config
        mounts = [str(root), *[p for p in environment.site_paths if not p.startswith(str(root) + "/")]]
        extra = tuple(dict.fromkeys([*base.extra_ro_paths, *mounts]))
        return replace(base, extra_ro_paths=extra, workdir_bytes=max(base.workdir_bytes, WORKDIR_BYTES))

    def _result(self, verdict: Verdict, extra: dict[str, Any], started: float) -> EvaluationResult:
        tests = dict(list(verdict.tests.items())[:SHOWN_TESTS])
        return EvaluationResult(
            key=self.name,
            score=int(verdict.resolved),
            comment=verdict.reason,
            metadata={
                "resolved": verdict.resolved,
                "reason": verdict.reason,
                "tests": tests,
                **verdict.details,
                **extra,
                "seconds": round(time.monotonic() - started, 3),
            },
        )


def _python_paths(instance: Instance, tree: Path) -> list[str]:
    if instance.recipe.python_paths:
        return list(instance.recipe.python_paths)
    return [p for p in ("src", ".") if (tree / p).is_dir()]
