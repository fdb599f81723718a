"""Reading a unified diff on the host, without applying it: its size (files, lines added
and removed) and the paths it touches. One pass over the lines, the text bounded before
it is read: a patch is untrusted."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_PATCH_BYTES = 8 * 1024 * 1024
FENCES = ("```diff", "```patch", "```udiff", "```")


@dataclass
class PatchSize:
    files: int = 0
    added: int = 0
    removed: int = 0
    bytes: int = 0
    paths: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {
            "files": self.files,
            "lines_added": self.added,
            "lines_removed": self.removed,
            "bytes": self.bytes,
        }


def without_fences(text: str) -> str:
    """The diff inside a Markdown code fence, when a model wrapped it in one."""
    stripped = text.strip()
    for fence in FENCES:
        if stripped.startswith(fence):
            body = stripped[len(fence) :].split("\n", 1)
            inner = body[1] if len(body) == 2 else ""
            end = inner.rfind("```")
            return (inner[:end] if end >= 0 else inner).rstrip("\n") + "\n"
    return text if text.endswith("\n") else text + "\n"


def measure(patch: str, max_paths: int = 1000) -> PatchSize:
    """Files (``+++``/``---`` headers or ``diff --git`` lines), added and removed lines."""
    size = PatchSize(bytes=len(patch.encode()))
    headers = 0
    seen: set[str] = set()
    for line in patch.split("\n"):
        if line.startswith("diff --git "):
            size.files += 1
        elif line.startswith("+++ ") or line.startswith("--- "):
            headers += 1
            path = _header_path(line)
            if path is not None and path not in seen and len(seen) < max_paths:
                seen.add(path)
                size.paths.append(path)
        elif line.startswith("+"):
            size.added += 1
        elif line.startswith("-"):
            size.removed += 1
    if size.files == 0:
        size.files = headers // 2
    return size


def _header_path(line: str) -> str | None:
    """``b/src/x.py`` of ``+++ b/src/x.py\t2024-01-01`` (None for /dev/null)."""
    path = line[4:].split("\t", 1)[0].strip()
    if path == "/dev/null" or not path:
        return None
    return path[2:] if path[:2] in ("a/", "b/") else path
