"""Snapshots (folder, archive, git ref) and environments built once per (repository,
commit, recipe) into the read-only cache, even with two workers asking at once."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from assay.evaluators.patches import EnvironmentRecipe, Snapshot
from assay.evaluators.patches._environment import build_environment
from assay.schemas import Example

from ._calc import FIX, Judge

pytestmark = pytest.mark.slow


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("ASSAY_PATCHES_CACHE", str(root))
    return root


def _with(example: Example, repository: object, environment: object = None) -> Example:
    inputs = {"repository": repository, **({"environment": environment} if environment else {})}
    return Example(inputs=inputs, outputs=example.outputs)


def test_an_archive_and_a_git_ref_are_snapshots_too(
    judge: Judge, calc_example: Example, calc_repo: Path, tmp_path: Path, cache: Path
) -> None:
    archive = tmp_path / "calc-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as bundle:
        bundle.add(calc_repo, arcname="calc-1.0")
    assert judge(FIX, example=_with(calc_example, str(archive))).score == 1
    zipped = tmp_path / "calc.zip"
    with zipfile.ZipFile(zipped, "w") as bundle:
        for path in calc_repo.rglob("*.py"):
            bundle.write(path, path.relative_to(calc_repo).as_posix())
    assert judge(FIX, example=_with(calc_example, str(zipped))).score == 1
    checkout = tmp_path / "checkout"
    shutil.copytree(calc_repo, checkout)
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "buggy"], check=True)
    (checkout / "calc.py").write_text("broken = True\n")  # the working tree is not the ref
    subprocess.run([*git, "commit", "-qam", "later"], check=True)
    result = judge(FIX, example=_with(calc_example, {"git": str(checkout), "ref": "HEAD~1"}))
    assert result.score == 1, result.comment
    assert result.metadata["repository"].startswith("git-")
    commit = subprocess.run([*git[:3], "rev-parse", "HEAD~1"], capture_output=True, text=True, check=True)
    swe_bench = Example(
        inputs={"repository": str(checkout), "base_commit": commit.stdout.strip()},
        outputs=calc_example.outputs,
    )
    assert judge(FIX, example=swe_bench).metadata["repository"] == result.metadata["repository"]


def test_an_archive_leaving_its_folder_is_refused(tmp_path: Path, cache: Path) -> None:
    archive = tmp_path / "evil.tar"
    with tarfile.open(archive, "w") as bundle:
        info = tarfile.TarInfo("../escaped.txt")
        bundle.addfile(info)
    from assay.errors import EvaluatorInputError

    with pytest.raises(EvaluatorInputError, match="cannot be extracted"):
        Snapshot(str(archive)).materialize(cache)
    assert not (tmp_path / "escaped.txt").exists()


def _wheel(folder: Path) -> Path:
    """A tiny wheel of a dependency (tinydep), made here: no download."""
    module = b"def double(x):\n    return 2 * x\n"
    metadata = b"Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n"
    wheel = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files = {
        "tinydep.py": module,
        "tinydep-1.0.dist-info/METADATA": metadata,
        "tinydep-1.0.dist-info/WHEEL": wheel,
    }
    record = (
        "".join(
            f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
            for name, data in files.items()
        )
        + "tinydep-1.0.dist-info/RECORD,,\n"
    )
    path = folder / "tinydep-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as bundle:
        for name, data in {**files, "tinydep-1.0.dist-info/RECORD": record.encode()}.items():
            bundle.writestr(name, data)
    return path


def test_a_requirements_environment_is_built_once_and_used(
    judge: Judge, calc_example: Example, calc_repo: Path, tmp_path: Path, cache: Path
) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels)
    repo = tmp_path / "repo"
    shutil.copytree(calc_repo, repo)
    (repo / "requirements.txt").write_text("tinydep\n")
    (repo / "calc.py").write_text(
        (repo / "calc.py")
        .read_text()
        .replace("return a * b", "import tinydep\n    return tinydep.double(a * b) // 2")
    )
    recipe = {"requirements": "requirements.txt", "pip_args": ["--no-index", "--find-links", str(wheels)]}
    fix = FIX.replace("     return a * b", "     import tinydep\n     return tinydep.double(a * b) // 2")
    example = _with(calc_example, str(repo), recipe)
    with ThreadPoolExecutor(2) as workers:
        first, second = workers.map(lambda _: judge(fix, example=example), range(2))
    assert first.score == 1 and second.score == 1, (first.comment, first.error)
    built = [first.metadata["environment"]["built_now"], second.metadata["environment"]["built_now"]]
    assert sorted(built) == [False, True]  # the second waited for the first's build
    third = judge(fix, example=example)
    assert third.metadata["environment"]["built_now"] is False
    assert third.metadata["environment"]["build_seconds"] > 0  # the build's time, kept
    assert len(list((cache / "envs").iterdir())) == 1


def test_a_venv_is_used_as_it_is(cache: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    built = build_environment(EnvironmentRecipe.of({"venv": str(venv)}, "here"), "k", tmp_path, cache)
    assert built.site_paths[0].endswith("site-packages") and not built.built_now


def test_a_venv_the_sandbox_cannot_see_is_refused(cache: Path, tmp_path: Path) -> None:
    from assay.errors import EvaluatorInputError

    with pytest.raises(EvaluatorInputError, match="which the sandbox mounts over"):
        build_environment(EnvironmentRecipe.of({"venv": "/work/some/venv"}, "here"), "k", tmp_path, cache)


def test_a_command_recipe_builds_an_importable_site(
    judge: Judge, calc_example: Example, calc_repo: Path, tmp_path: Path, cache: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(calc_repo, repo)
    (repo / "calc.py").write_text(
        (repo / "calc.py").read_text().replace("return a * b", "import helper\n    return helper.times(a, b)")
    )
    fix = FIX.replace("     return a * b", "     import helper\n     return helper.times(a, b)")
    command = ["sh", "-c", 'printf "def times(a, b):\\n    return a * b\\n" > "$ASSAY_ENV/site/helper.py"']
    result = judge(fix, example=_with(calc_example, str(repo), {"command": command}))
    assert result.score == 1, (result.comment, result.error)
    assert result.metadata["environment"]["built_now"] is True


def test_a_folder_changed_on_disk_is_a_new_snapshot(calc_repo: Path, tmp_path: Path, cache: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(calc_repo, repo)
    first, _ = Snapshot(str(repo)).materialize(cache)
    assert Snapshot(str(repo)).materialize(cache)[0] == first
    (repo / "calc.py").write_text("changed = True\n")
    second, tree = Snapshot(str(repo)).materialize(cache)
    assert second != first and (tree / "calc.py").read_text() == "changed = True\n"
