"""A repository snapshot: a folder, a git checkout at a ref, or an archive, copied once
into the cache (keyed by its content or commit) so the sandbox can mount it read-only."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import EvaluatorInputError
from assay.evaluators.patches._cache import build_once, digest

ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")
MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024
MAX_SNAPSHOT_FILES = 100_000
SKIPPED = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv"}


@dataclass(frozen=True)
class Snapshot:
    """Where a repository comes from: ``path`` (a folder or an archive), or a git checkout
    at ``path`` with ``ref`` (a commit, tag or branch already on disk: nothing is fetched)."""

    path: str
    ref: str | None = None

    @classmethod
    def of(cls, value: Any, where: str) -> Snapshot:
        if isinstance(value, Snapshot):
            return value
        if isinstance(value, (str, os.PathLike)):
            return cls(os.fspath(value))
        if isinstance(value, dict) and isinstance(value.get("git"), str):
            return cls(value["git"], str(value.get("ref") or "HEAD"))
        raise EvaluatorInputError(
            f"{where} must be a folder or archive path, or {{'git': path, 'ref': commit}}; got {value!r:.200}"
        )

    def materialize(self, root: Path) -> tuple[str, Path]:
        """The snapshot's key and its read-only tree in the cache."""
        source = Path(self.path).expanduser()
        if not source.exists():
            raise EvaluatorInputError(f"the repository snapshot {source} does not exist")
        if self.ref is not None:
            key = "git-" + digest(str(source.resolve()), _commit(source, self.ref))
            build_once(root / "repos" / key, lambda staging: _from_git(source, self.ref or "HEAD", staging))
        elif source.is_dir():
            key = "dir-" + _tree_digest(source)
            build_once(root / "repos" / key, lambda staging: _copy_tree(source, staging))
        elif source.name.endswith(ARCHIVES):
            key = "archive-" + digest(source.read_bytes())
            build_once(root / "repos" / key, lambda staging: _extract(source, staging))
        else:
            raise EvaluatorInputError(
                f"the repository snapshot {source} is neither a folder nor an archive ({', '.join(ARCHIVES)})"
            )
        return key, root / "repos" / key


def _commit(checkout: Path, ref: str) -> str:
    done = _git(checkout, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
    return done.stdout.decode().strip()


def _git(checkout: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        ["git", "-C", str(checkout), *args],
        capture_output=True,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
    )
    if done.returncode != 0:
        raise EvaluatorInputError(
            f"git {' '.join(args[:2])} in {checkout} failed: {done.stderr.decode(errors='replace').strip()[-500:]}"
        )
    return done


def _from_git(checkout: Path, ref: str, staging: Path) -> None:
    archive = staging.parent / f"{staging.name}.tar"
    try:
        _git(checkout, "archive", "--format=tar", "-o", str(archive), "--end-of-options", ref)
        _extract(archive, staging)
    finally:
        archive.unlink(missing_ok=True)


def _walk(source: Path) -> list[Path]:
    found: list[Path] = []
    for directory, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        found += [Path(directory, name) for name in sorted(files)]
        found += [Path(directory, d) for d in dirs if os.path.islink(os.path.join(directory, d))]
        if len(found) > MAX_SNAPSHOT_FILES:
            raise EvaluatorInputError(f"the repository snapshot {source} has over {MAX_SNAPSHOT_FILES} files")
    return found


_digests: dict[tuple[str, int], str] = {}  # (folder, its files' stat signature) -> digest


def _tree_digest(source: Path) -> str:
    """The folder's content key; read once per process while no file's size, time or
    mode changes (a walk of stats, not of contents)."""
    signature = hash(tuple((str(p), *_stat(p)) for p in _walk(source)))
    key = (str(source.resolve()), signature)
    if key not in _digests:
        _digests[key] = _content_digest(source)
    return _digests[key]


def _stat(path: Path) -> tuple[int, int, int]:
    found = os.lstat(path)
    return found.st_size, found.st_mtime_ns, found.st_mode


def _content_digest(source: Path) -> str:
    parts: list[bytes | str] = []
    total = 0
    for path in _walk(source):
        parts.append(path.relative_to(source).as_posix())
        if path.is_symlink():
            parts.append("link:" + os.readlink(path))
            continue
        data = path.read_bytes()
        total += len(data)
        if total > MAX_SNAPSHOT_BYTES:
            raise EvaluatorInputError(f"the repository snapshot {source} is over {MAX_SNAPSHOT_BYTES} bytes")
        parts += [str(os.stat(path).st_mode & 0o111), data]
    return digest(*parts)


def _copy_tree(source: Path, staging: Path) -> None:
    shutil.copytree(
        source, staging, symlinks=True, dirs_exist_ok=True, ignore=lambda _d, names: SKIPPED & set(names)
    )


def _extract(archive: Path, staging: Path) -> None:
    """Members outside the folder, absolute paths and links leaving it are refused."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as bundle:
            _check_size(archive, sum(info.file_size for info in bundle.infolist()))
            for info in bundle.infolist():
                if info.filename.startswith("/") or ".." in Path(info.filename).parts:
                    raise EvaluatorInputError(f"{archive}: member {info.filename!r} leaves the folder")
            bundle.extractall(staging)
        _unwrap_single_folder(staging)
        return
    try:
        with tarfile.open(archive) as bundle:
            members = bundle.getmembers()
            _check_size(archive, sum(m.size for m in members))
            if hasattr(tarfile, "data_filter"):
                bundle.extractall(staging, filter="data")
            else:  # Python < 3.10.12: the same refusals, by hand
                _check_members(archive, members)
                bundle.extractall(staging)
    except (tarfile.TarError, OSError) as exc:
        raise EvaluatorInputError(f"the archive {archive} cannot be extracted: {exc}") from None
    _unwrap_single_folder(staging)


def _check_members(archive: Path, members: list[tarfile.TarInfo]) -> None:
    for member in members:
        parts = Path(member.name).parts
        leaves = member.name.startswith("/") or ".." in parts
        if member.issym() or member.islnk():
            target = Path(member.name).parent / member.linkname
            leaves = leaves or member.linkname.startswith("/") or ".." in target.parts
        if leaves or not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise EvaluatorInputError(
                f"the archive {archive} cannot be extracted: {member.name!r} leaves the folder"
            )


def _check_size(archive: Path, size: int) -> None:
    if size > MAX_SNAPSHOT_BYTES:
        raise EvaluatorInputError(f"the archive {archive} unpacks to over {MAX_SNAPSHOT_BYTES} bytes")


def _unwrap_single_folder(staging: Path) -> None:
    """``project-1.0/...`` (how sdists and GitHub archives are laid out) becomes the root."""
    entries = list(staging.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        inner = entries[0]
        for child in list(inner.iterdir()):
            child.rename(staging / child.name)
        inner.rmdir()
