"""Third-party packages a sandboxed script may import (pytest, coverage, pandas...).

The sandbox exposes only the interpreter's standard library. The evaluators that run a
test suite or a data script need a few installed packages too, so those packages are
copied, once, into a cache folder of their own (hard links where the file system allows),
which the sandbox mounts read-only. Only the packages asked for are there, never the whole
environment; the cache folder must lie outside the sandbox's work root (``/work``), which
the sandbox mounts over.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.errors import MissingExtraError, SandboxSetupError
from assay.sandbox.config import SandboxConfig

SITE_ENV = "ASSAY_SANDBOX_SITE_DIR"
SANDBOX_WORKROOT = "/work"

#: distributions (pip names); their dependencies come along
TEST_TOOLS = ("pytest", "coverage")
DATA_TOOLS = ("pandas", "pyarrow", "polars")

_lock = threading.Lock()
_sites: dict[tuple[tuple[str, ...], tuple[str, ...]], SandboxSite] = {}


@dataclass(frozen=True)
class SandboxSite:
    """A read-only folder of packages, and the sandbox config that mounts it."""

    path: str
    packages: tuple[str, ...]

    def config(self, base: SandboxConfig) -> SandboxConfig:
        from dataclasses import replace

        return replace(base, extra_ro_paths=(*base.extra_ro_paths, self.path))

    def prelude(self) -> str:
        """Python lines that make the packages importable inside the sandbox."""
        return f"import sys\nsys.path.insert(0, {self.path!r})\n"


def sandbox_site(distributions: Sequence[str], required: Sequence[str] = ()) -> SandboxSite:
    """The site holding the installed ones of ``distributions`` with their dependencies;
    the ``required`` ones must be installed. Worked out once per process (reading the
    installed distributions' metadata takes a fifth of a second)."""
    key = (tuple(distributions), tuple(required))
    with _lock:
        site = _sites.get(key)
        if site is None or not os.path.isdir(site.path):
            site = _sites[key] = _make_site(distributions, required)
        return site


def _make_site(distributions: Sequence[str], required: Sequence[str]) -> SandboxSite:
    missing = [name for name in required if _distribution(name) is None]
    if missing:
        raise MissingExtraError(
            f"{', '.join(missing)} must be installed to run in the sandbox: pip install 'assay[code]'",
            name=missing[0],
        )
    found = sorted(_import_names(_closure(distributions)))
    root = cache_root() / _key(found)
    if not root.is_dir():
        _build(root, found)
    return SandboxSite(str(root), tuple(found))


def _distribution(name: str) -> importlib.metadata.Distribution | None:
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _closure(names: Sequence[str]) -> set[str]:
    """The installed distributions among ``names`` and everything they require."""
    from packaging.requirements import InvalidRequirement, Requirement

    seen: set[str] = set()
    pending = list(names)
    while pending:
        dist = _distribution(pending.pop())
        if dist is None or _canonical(dist.metadata["Name"]) in seen:
            continue
        seen.add(_canonical(dist.metadata["Name"]))
        for line in dist.requires or []:
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return seen


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _import_names(distributions: set[str]) -> set[str]:
    names: set[str] = set()
    for top, owners in importlib.metadata.packages_distributions().items():
        if any(_canonical(owner) in distributions for owner in owners) and _origin(top):
            names.add(top)
    return names


def _origin(name: str) -> Path | None:
    """The package's folder (or single-module file) on the host."""
    if not name.isidentifier():
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        if spec is not None and spec.submodule_search_locations:
            return Path(next(iter(spec.submodule_search_locations)))
        return None
    origin = Path(spec.origin)
    return origin.parent if origin.name == "__init__.py" else origin


def _key(packages: list[str]) -> str:
    parts = [sys.version]
    for name in packages:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "?"
        parts.append(f"{name}={version}@{_origin(name)}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def cache_root() -> Path:
    configured = os.environ.get(SITE_ENV)
    candidates = [Path(configured)] if configured else []
    home = Path.home() / ".cache" / "assay" / "sandbox-site"
    if _others_may_enter(home):  # not a private home (/root): the rlimit backend's uid reads it
        candidates.append(home)
    candidates.append(Path(tempfile.gettempdir()) / f"assay-sandbox-site-{os.geteuid()}")
    for candidate in candidates:
        resolved = candidate.resolve()
        if not (str(resolved) + "/").startswith(SANDBOX_WORKROOT + "/"):
            return resolved
    raise SandboxSetupError(f"no folder outside {SANDBOX_WORKROOT} for sandbox packages; set {SITE_ENV}")


def _others_may_enter(path: Path) -> bool:
    """Every existing folder from ``path`` up lets other users through."""
    folder = path.resolve()
    while not folder.exists():
        folder = folder.parent
    return all(os.stat(f).st_mode & stat.S_IXOTH for f in (folder, *folder.parents))


def _build(root: Path, packages: list[str]) -> None:
    root.parent.mkdir(parents=True, exist_ok=True)
    if root.parent.stat().st_uid != os.geteuid():
        raise SandboxSetupError(f"{root.parent} belongs to another user; set {SITE_ENV}")
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root.parent))
    try:
        for name in packages:
            origin = _origin(name)
            assert origin is not None
            target = staging / origin.name
            if origin.is_dir():
                shutil.copytree(
                    origin,
                    target,
                    copy_function=_link_or_copy,
                    ignore=shutil.ignore_patterns("__pycache__", "tests"),
                )
            else:
                _link_or_copy(str(origin), str(target))
            libs = origin.parent / f"{name}.libs"  # shared libraries vendored by wheels
            if origin.is_dir() and libs.is_dir() and not (staging / libs.name).exists():
                shutil.copytree(libs, staging / libs.name, copy_function=_link_or_copy)
        _readable(staging)
        os.rename(staging, root)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not root.is_dir():  # another process may have built it meanwhile
            raise


def _link_or_copy(source: str, target: str) -> None:
    """A hard link when the file is readable by all (a link shares its mode), else a
    copy made readable."""
    mode = os.stat(source).st_mode
    if mode & 0o444 == 0o444:
        try:
            os.link(source, target)
            return
        except OSError:
            pass
    shutil.copy2(source, target)
    os.chmod(target, mode | 0o444)


def _readable(folder: Path) -> None:
    """A sandbox may run as an unprivileged uid: every folder must be traversable."""
    for directory, _, _ in os.walk(folder):
        os.chmod(directory, 0o755)
