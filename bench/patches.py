"""Repository patches: what an instance costs in assay against its tests' own run time.

For each instance of bench/data/patches (its correct patch), alternately in one run:
- plain: the same tests run by ``python -m pytest`` (no plugin auto-loading, as in the
  sandbox) on a copy with the patch applied
  (``git apply``), in the same environment, no sandbox, no cache;
- assay: ``RepositoryPatchEvaluator`` on the default sandbox backend.
The environment (and the snapshot's copy in the cache) is built before the rounds and its
build time printed separately. Goal: assay <= plain + 1 s per instance.

    .venv/bin/python bench/patches.py [--rounds 3] [--backend auto]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from assay.evaluators.patches import RepositoryPatchEvaluator, read_instances
from assay.sandbox import SandboxConfig
from assay.schemas import Example, Run

FOLDER = Path(__file__).resolve().parent / "data" / "patches"


def plain(example: Example) -> float:
    """Copy, apply both patches, run the named tests: what a bare script would do."""
    inputs, outputs = dict(example.inputs or {}), dict(example.outputs or {})
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "repo"
        shutil.copytree(inputs["repository"], repo)
        for patch in (outputs["patch"], outputs["test_patch"]):
            subprocess.run(["git", "apply", "-"], cwd=repo, input=patch.encode(), check=True)
        tests = [*outputs["FAIL_TO_PASS"], *outputs["PASS_TO_PASS"]]
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
            cwd=repo,
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(repo), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        )
        assert done.returncode == 0, done.stdout.decode()[-500:]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args()
    examples = read_instances(FOLDER)
    evaluator = RepositoryPatchEvaluator(sandbox=SandboxConfig(backend=args.backend))

    def judged(example: Example) -> tuple[float, dict[str, object]]:
        started = time.perf_counter()
        result = evaluator.evaluate(Run(outputs={"output": (example.outputs or {})["patch"]}), example)
        seconds = time.perf_counter() - started
        assert getattr(result, "score", None) == 1, getattr(result, "comment", result)
        return seconds, dict(getattr(result, "metadata", {}))

    builds = []
    for example in examples:  # builds the cache entries and warms the pool
        _, meta = judged(example)
        environment = meta["environment"]
        assert isinstance(environment, dict)
        builds.append(float(environment["build_seconds"]))
    plain_times: list[float] = []
    assay_times: list[float] = []
    test_times: list[float] = []
    for _ in range(args.rounds):
        for example in examples:
            plain_times.append(plain(example))
            seconds, meta = judged(example)
            assay_times.append(seconds)
            test_times.append(float(meta["test_seconds"]))  # type: ignore[arg-type]
    extra = [a - p for a, p in zip(assay_times, plain_times)]
    print(f"{len(examples)} instances x {args.rounds} rounds, backend {args.backend}")
    print(f"environment build (once per instance): median {statistics.median(builds):.3f} s")
    print(f"plain pytest (copy, git apply, pytest): median {statistics.median(plain_times):.3f} s")
    print(f"assay (sandboxed):                    median {statistics.median(assay_times):.3f} s")
    print(f"  of which the tests' run inside:       median {statistics.median(test_times):.3f} s")
    print(f"extra per instance: median {statistics.median(extra):+.3f} s, max {max(extra):+.3f} s")


if __name__ == "__main__":
    main()
