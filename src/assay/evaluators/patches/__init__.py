"""Repository patches, judged the SWE-bench way: FAIL_TO_PASS and PASS_TO_PASS tests run
on a sandboxed copy of the repository with the candidate's patch applied."""

from assay.evaluators.patches._environment import EnvironmentRecipe
from assay.evaluators.patches._evaluator import RepositoryPatchEvaluator
from assay.evaluators.patches._folder import read_instances
from assay.evaluators.patches._snapshot import Snapshot

__all__ = ["EnvironmentRecipe", "RepositoryPatchEvaluator", "Snapshot", "read_instances"]
