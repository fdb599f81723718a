"""Trees a job makes to outlast its cleanup: thousands of levels deep (``shutil.rmtree``
recurses once a level), paths longer than PATH_MAX, permissions taken away. Each is
gone before the next job, and the trusted parent keeps working."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.sandbox import Call, SandboxPool, get_language
from assay.sandbox.harness.tree import remove_tree

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
PY = get_language("python")

LONG_NAME = "n" * 200


def _grow(top: Path, levels: int, name: str) -> None:
    """Folders ``levels`` deep under ``top``, made relative to each other (the full path
    may be longer than the kernel takes), a file at the bottom, the way up locked."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(os.open("bottom", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    os.chmod(fd, 0)
    os.close(fd)


@pytest.mark.parametrize("levels, name", [(3000, "d"), (40, LONG_NAME)], ids=["deep", "long"])
def test_remove_tree_removes_any_shape(tmp_path: Path, levels: int, name: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("not the job's")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(outside)  # removed as a link, never followed
    (tree / "wide").mkdir()
    for index in range(200):
        (tree / "wide" / str(index)).mkdir()
    _grow(tree, levels, name)
    remove_tree(str(tree))
    assert not tree.exists()
    assert (outside / "kept").read_text() == "not the job's"


def test_remove_tree_takes_a_file_or_nothing(tmp_path: Path) -> None:
    single = tmp_path / "file"
    single.write_text("x")
    remove_tree(str(single))
    remove_tree(str(tmp_path / "missing"))  # never raises
    assert not single.exists()


DEEP = """
import os
def grow(where, levels, name):
    folder = where or os.getcwd()
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    os.mkdir("assay-deep", dir_fd=fd)
    for step in range(levels):
        child = os.open("assay-deep" if step == 0 else name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
        os.mkdir(name, dir_fd=fd)
    with open(os.open("left", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd), "w") as left:
        left.write("from the last job")
    os.chmod(fd, 0)
    return os.path.join(folder, "assay-deep")
def look(path):
    return os.path.exists(path)
"""


@pytest.mark.parametrize("where", ["work folder", "/dev/shm"])
@pytest.mark.parametrize("levels, name", [(1500, "d"), (40, LONG_NAME)], ids=["deep", "long"])
def test_a_deep_tree_does_not_outlast_the_job(pool: SandboxPool, where: str, levels: int, name: str) -> None:
    folder = "" if where == "work folder" else where
    grown = pool.run_function(PY, DEEP, "grow", [Call((folder, levels, name))], timeout=30).outcomes[0]
    assert grown.ok, grown
    seen = pool.run_function(PY, DEEP, "look", [Call((grown.value,))], timeout=30).outcomes[0]
    assert seen.value is False, seen
    again = pool.run_function(PY, "def f():\n    return 1\n", "f", [Call()], timeout=30).outcomes[0]
    assert again.value == 1, again  # the parent cleaned up too, and goes on
