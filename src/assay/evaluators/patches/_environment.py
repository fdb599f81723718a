"""An environment recipe, and building it once per (repository, commit, recipe).

Python first: a requirements file installed with pip into a folder of its own (``pip
install --target``, by the interpreter the sandbox runs), or an existing virtual
environment used as it is. Anything else (other languages, system steps) is a command
run once in a fresh folder. The result is mounted read-only: a test run cannot change it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import EvaluatorInputError, SandboxSetupError
from assay.evaluators.patches._cache import SANDBOX_WORKROOT, build_once, digest

BUILD_TIMEOUT = 1800.0
RUNNERS = ("pytest", "go")


@dataclass(frozen=True)
class EnvironmentRecipe:
    """How to build the environment the tests run in.

    requirements: a requirements file (a path relative to the repository, or absolute);
        installed with ``pip install --target`` plus ``pip_args`` (``--no-index``,
        ``--find-links DIR`` for an offline build).
    venv: an existing virtual environment, used read-only as it is.
    command: run once (no shell) in a fresh folder, ``$ASSAY_ENV`` naming it and
        ``$ASSAY_REPO`` the snapshot; what it puts in ``$ASSAY_ENV/site`` is importable.
    python_paths: folders of the repository put first on ``sys.path`` (default: ``src``
        when there is one, and the repository's root).
    runner: ``"pytest"``, or ``"go"`` (``go test -json``; test ids ``folder::TestName``,
        nothing downloaded: dependencies vendored).
    """

    requirements: str | None = None
    pip_args: tuple[str, ...] = ()
    venv: str | None = None
    command: tuple[str, ...] = ()
    python_paths: tuple[str, ...] = ()
    runner: str = "pytest"

    @classmethod
    def of(cls, value: Any, where: str) -> EnvironmentRecipe:
        if value is None:
            return cls()
        if isinstance(value, EnvironmentRecipe):
            return value
        if not isinstance(value, dict):
            raise EvaluatorInputError(
                f"{where} must be an object (requirements, venv or command); got {value!r:.200}"
            )
        known = {"requirements", "pip_args", "venv", "command", "python_paths", "runner"}
        unknown = sorted(set(value) - known)
        if unknown:
            raise EvaluatorInputError(f"{where} has unknown field(s) {unknown}; known: {sorted(known)}")
        recipe = cls(
            requirements=value.get("requirements"),
            pip_args=tuple(value.get("pip_args") or ()),
            venv=value.get("venv"),
            command=tuple(value.get("command") or ()),
            python_paths=tuple(value.get("python_paths") or ()),
            runner=str(value.get("runner") or "pytest"),
        )
        if recipe.runner not in RUNNERS:
            raise EvaluatorInputError(
                f"{where}: runner must be one of {', '.join(RUNNERS)}, got {recipe.runner!r}"
            )
        if sum(bool(x) for x in (recipe.requirements, recipe.venv, recipe.command)) > 1:
            raise EvaluatorInputError(f"{where}: give one of requirements, venv or command")
        return recipe

    def describe(self) -> dict[str, Any]:
        return {
            "requirements": self.requirements,
            "pip_args": list(self.pip_args),
            "venv": self.venv,
            "command": list(self.command),
            "python_paths": list(self.python_paths),
            "runner": self.runner,
        }


@dataclass(frozen=True)
class BuiltEnvironment:
    """Read-only folders to import from, in order, and how the build went."""

    key: str
    site_paths: tuple[str, ...]
    built_now: bool
    build_seconds: float


def build_environment(
    recipe: EnvironmentRecipe, snapshot_key: str, tree: Path, root: Path
) -> BuiltEnvironment:
    if recipe.venv:
        return BuiltEnvironment("venv", (_venv_site(Path(recipe.venv)),), False, 0.0)
    requirements = _requirements_text(recipe, tree)
    key = "env-" + digest(
        snapshot_key, json.dumps(recipe.describe(), sort_keys=True), requirements, sys.version
    )
    target = root / "envs" / key
    started = time.monotonic()
    built = build_once(target, lambda staging: _build(recipe, tree, staging))
    seconds = time.monotonic() - started if built else _recorded_seconds(target)
    if built:
        (target / "build-seconds").write_text(f"{seconds:.3f}")
    return BuiltEnvironment(key, (str(target / "site"),), built, seconds)


def _recorded_seconds(target: Path) -> float:
    try:
        return float((target / "build-seconds").read_text())
    except (OSError, ValueError):
        return 0.0


def _requirements_text(recipe: EnvironmentRecipe, tree: Path) -> str:
    if not recipe.requirements:
        return ""
    path = Path(recipe.requirements)
    path = path if path.is_absolute() else tree / path
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvaluatorInputError(
            f"the environment's requirements file {path} cannot be read: {exc}"
        ) from None


def _build(recipe: EnvironmentRecipe, tree: Path, staging: Path) -> None:
    site = staging / "site"
    site.mkdir()
    if recipe.command:
        _run(list(recipe.command), staging, {"ASSAY_ENV": str(staging), "ASSAY_REPO": str(tree)})
    elif recipe.requirements and _requirements_text(recipe, tree).strip():
        requirements = Path(recipe.requirements)
        requirements = requirements if requirements.is_absolute() else tree / requirements
        pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
        _run([*pip, "--target", str(site), *recipe.pip_args, "-r", str(requirements)], tree, {})


def _run(argv: list[str], cwd: Path, extra: dict[str, str]) -> None:
    try:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, timeout=BUILD_TIMEOUT, env={**os.environ, **extra}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxSetupError(f"building the environment ({argv[0]}) failed: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).decode(errors="replace").strip()[-1500:]
        raise SandboxSetupError(f"building the environment failed (exit {done.returncode}): {tail}")


def _venv_site(venv: Path) -> str:
    """The venv's site-packages (it must be the sandbox's Python version)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv.expanduser().resolve() / "lib" / version / "site-packages"
    if (str(site) + "/").startswith(SANDBOX_WORKROOT + "/"):
        raise EvaluatorInputError(
            f"the environment {venv} lies under {SANDBOX_WORKROOT}, which the sandbox mounts over: "
            "move it, or use a requirements recipe (built into the cache)"
        )
    if not site.is_dir():
        raise EvaluatorInputError(
            f"the environment {venv} has no {site.relative_to(venv.expanduser().resolve())} "
            f"(it must be made by {version}, the interpreter the sandbox runs: {sysconfig.get_path('stdlib')})"
        )
    return str(site)
