"""Removing a tree a job made, whatever its shape.

A job can make folders thousands of levels deep, whose paths are longer than the kernel
takes (PATH_MAX), and take its own permissions away. ``shutil.rmtree`` (before Python
3.12) calls itself once a level, so a deep tree raises RecursionError, and paths past
PATH_MAX fail: either way the tree would stay for the next job. Here the walk is a loop,
every call names one entry relative to an open folder, and one folder is open at a time
(the way back up is "..": nothing else runs in the tree while it is removed).
"""

from __future__ import annotations

import os
import stat

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str) -> None:
    """Remove ``path`` (a file, a link or a folder) and everything beneath it, as far as
    this process's permissions go (a folder it owns is made searchable first). Never
    raises: what cannot be removed stays."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
    except OSError:
        return
    folder = _enter(None, path)
    if folder is None:
        return
    _empty(folder)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _empty(top: int) -> None:
    """Empty the open folder ``top`` (closed on return), depth first, without recursion."""
    folder, names, pending = top, [], [_clear_files(top)]  # names: the way back up
    while pending:
        if pending[-1]:
            name = pending[-1].pop()
            child = _enter(folder, name)
            if child is not None:
                os.close(folder)
                folder = child
                names.append(name)
                pending.append(_clear_files(child))
            continue
        pending.pop()
        if not names:
            break
        parent = _leave(folder, names.pop())
        if parent is None:
            return
        folder = parent
    os.close(folder)


def _clear_files(folder: int) -> list[str]:
    """Unlink every entry of ``folder`` that is not a folder; return the folders."""
    folders = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.name)
                    else:
                        os.unlink(entry.name, dir_fd=folder)
                except OSError:
                    continue
    except OSError:
        pass
    return folders


def _enter(folder: int | None, name: str) -> int | None:
    """Open the folder ``name`` (of ``folder``) and make it ours to empty where we own
    it. Opened before any chmod where it can be: a descriptor cannot be swapped for a
    link, so root never changes the mode of something else."""
    try:
        child = os.open(name, _DIRECTORY, dir_fd=folder)
    except PermissionError:  # locked by its owner: that is us, or nothing can be done
        try:
            os.chmod(name, 0o700, dir_fd=folder)
            child = os.open(name, _DIRECTORY, dir_fd=folder)
        except OSError:
            return None
    except OSError:
        return None
    try:
        os.fchmod(child, 0o700)
    except OSError:
        pass
    return child


def _leave(folder: int, name: str) -> int | None:
    """Back to the parent of ``folder`` (closed), and remove ``name``, emptied, from it."""
    try:
        parent = os.open("..", _DIRECTORY, dir_fd=folder)
    except OSError:
        os.close(folder)
        return None
    os.close(folder)
    try:
        os.rmdir(name, dir_fd=parent)
    except OSError:
        pass
    return parent
