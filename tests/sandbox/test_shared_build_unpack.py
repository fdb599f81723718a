"""The compile step's side of a shared build (``harness/shared_build.py``): it reads the
export from the descriptor it was handed, closes it, and unpacks it into its own folder
only if the digest matches and every member is a folder or a regular file inside it."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from assay.sandbox.harness import shared_build


def export(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    """An export as the first job writes it: first byte, tar, SHA-256 trailer."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for info, content in members:
            info.size = len(content) if info.isfile() else 0
            archive.addfile(info, io.BytesIO(content) if info.isfile() else None)
    payload = shared_build.BUILT + buffer.getvalue()
    return payload + hashlib.sha256(payload).digest()


def member(
    name: str, content: bytes = b"", kind: bytes = tarfile.REGTYPE, mode: int = 0o644
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.mode = kind, mode
    if kind == tarfile.SYMTYPE:
        info.linkname = "/etc/passwd"
    return info, content


def handed(tmp_path: Path, data: bytes) -> int:
    path = tmp_path / "export"
    path.write_bytes(data)
    return os.open(path, os.O_RDONLY)


def reuse(tmp_path: Path, data: bytes, digest: str | None = None) -> tuple[list[str] | None, int]:
    fd = handed(tmp_path, data)
    job = tmp_path / "job"
    job.mkdir()
    os.chdir(job)
    expected = digest if digest is not None else hashlib.sha256(data[:-32]).hexdigest()
    return shared_build.reuse({"fd": fd, "digest": expected}), fd


def closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


ARGV = member(shared_build.ARGV, json.dumps([f"{shared_build.CWD}/program"]).encode())


@pytest.fixture(autouse=True)
def _back_to_cwd() -> object:
    here = os.getcwd()
    yield None
    os.chdir(here)


def test_a_whole_export_is_unpacked_with_its_modes(tmp_path: Path) -> None:
    data = export(
        [
            member("program", b"\x7fELF", mode=0o755),
            member("lib", kind=tarfile.DIRTYPE),
            member("lib/x", b"x"),
            ARGV,
        ]
    )
    argv, fd = reuse(tmp_path, data)
    assert argv == [str(tmp_path / "job" / "program")]
    assert sorted(os.listdir(tmp_path / "job")) == ["lib", "program"]
    assert os.stat(tmp_path / "job" / "program").st_mode & 0o777 == 0o755
    assert (tmp_path / "job" / "lib" / "x").read_bytes() == b"x"
    assert closed(fd)


@pytest.mark.parametrize(
    "bad",
    [
        member("../escaped", b"x"),
        member("/tmp/escaped-absolute", b"x"),
        member("link", kind=tarfile.SYMTYPE),
        member("device", kind=tarfile.CHRTYPE),
    ],
    ids=["parent", "absolute", "symlink", "device"],
)
def test_a_member_that_is_not_a_file_inside_the_folder_means_compiling_afresh(
    tmp_path: Path, bad: tuple[tarfile.TarInfo, bytes]
) -> None:
    argv, fd = reuse(tmp_path, export([member("program", b"p", mode=0o755), bad, ARGV]))
    assert argv is None and closed(fd)
    assert os.listdir(tmp_path / "job") == []
    assert sorted(os.listdir(tmp_path)) == ["export", "job"]
    assert not os.path.exists("/tmp/escaped-absolute")


def test_a_digest_that_does_not_match_means_compiling_afresh(tmp_path: Path) -> None:
    data = export([member("program", b"p", mode=0o755), ARGV])
    argv, fd = reuse(tmp_path, data, digest=hashlib.sha256(b"another build").hexdigest())
    assert argv is None and closed(fd) and os.listdir(tmp_path / "job") == []


def test_a_cut_export_means_compiling_afresh(tmp_path: Path) -> None:
    data = export([member("program", b"p" * 4096, mode=0o755), ARGV])
    argv, fd = reuse(tmp_path, data[:100], digest=hashlib.sha256(data[:-32]).hexdigest())
    assert argv is None and closed(fd)


def test_the_descriptors_named_never_reach_an_exec(tmp_path: Path) -> None:
    first, second = handed(tmp_path, b"a"), os.open(tmp_path / "export", os.O_RDONLY)
    for fd in (first, second):
        os.set_inheritable(fd, True)
    shared_build.seal({"export_fd": first, "shared": {"fd": second, "digest": ""}})
    assert not os.get_inheritable(first) and not os.get_inheritable(second)
    os.close(first)
    os.close(second)
