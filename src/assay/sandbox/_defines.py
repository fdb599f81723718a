"""Does a completion define the entry point itself? (``Language.defines``)

Read in the trusted parent on the candidate's text, so every check is linear in it: each
pattern is anchored at a line start and only crosses spaces and tabs (``^\\s*`` would
run over every following blank line, from every line start), and the typed languages
(Java, C++), whose return types have no fixed shape, are checked in two linear steps: the
first ``name(`` on a line, then whether all that precedes it could be modifiers and a type
(a ``(`` can be in no type, so a later ``name(`` on the same line never is a declaration).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

__all__ = ["cpp_defines", "go_defines", "java_defines", "js_defines", "python_defines", "ts_defines"]


def python_defines(code: str, name: str) -> bool:
    if name not in code:  # the usual completion, a body: no pattern to compile per name
        return False
    escaped = re.escape(name)
    pattern = rf"^(?:async[ \t]+)?def[ \t]+{escaped}[ \t]*\(|^{escaped}[ \t]*="
    return re.search(pattern, code, re.MULTILINE) is not None


def js_defines(code: str, name: str) -> bool:
    return name in code and _script_defines(code, name, call="[ \t]*\\(", binding="[ \t]*=")


def ts_defines(code: str, name: str) -> bool:
    return name in code and _script_defines(code, name, call="[ \t]*[<(]", binding="[ \t]*[:=]")


def _script_defines(code: str, name: str, call: str, binding: str) -> bool:
    escaped = re.escape(name)
    lead = r"^[ \t]*(?:export[ \t]+)?"
    pattern = (
        rf"{lead}(?:async[ \t]+)?function[ \t]*\*?[ \t]*{escaped}{call}"
        rf"|{lead}(?:const|let|var)[ \t]+{escaped}{binding}"
    )
    return re.search(pattern, code, re.MULTILINE) is not None


def go_defines(code: str, name: str) -> bool:
    return re.search(rf"^[ \t]*func[ \t]+{re.escape(name)}[ \t]*[\[(]", code, re.MULTILINE) is not None


_JAVA_TYPE_CHARS = re.compile(r"[\w<>\[\],.? \t]*")  # modifiers are words too
_CPP_TYPE_CHARS = re.compile(r"[\w:<>,*& \t]*")


def java_defines(code: str, name: str) -> bool:
    """A method declaration: modifiers and a type, a space, the name, ``(``."""
    if "class " not in code:
        return False
    return any(_typed_prefix(before, _JAVA_TYPE_CHARS) for before, _ in _first_calls(code, name))


def cpp_defines(code: str, name: str) -> bool:
    """A definition: a type, a space (then maybe ``*`` or ``&``), the name, ``(``, the
    parameters with no ``;``, ``)``, maybe ``const``, ``{``."""
    bodies: _Bodies | None = None
    for before, end in _first_calls(code, name):
        pointer = before.endswith(("*", "&"))
        if _typed_prefix(before[:-1] if pointer else before, _CPP_TYPE_CHARS):
            bodies = bodies or _Bodies(code)
            if bodies.opens_before_statement_end(end):
                return True
    return False


def _first_calls(code: str, name: str) -> Iterator[tuple[str, int]]:
    """For each line with ``name(``: the text before its first one, and the offset after it."""
    call = re.compile(rf"{re.escape(name)}[ \t]*\(")
    offset = 0
    for line in code.split("\n"):
        found = call.search(line)
        if found is not None:
            yield line[: found.start()], offset + found.end()
        offset += len(line) + 1


def _typed_prefix(before: str, chars: re.Pattern[str]) -> bool:
    return before[-1:] in (" ", "\t") and bool(before.strip()) and chars.fullmatch(before) is not None


class _Bodies:
    """Where ``) [const] {`` and ``;`` occur, to ask in log time whether the parameter
    list from an offset reaches a body before the statement ends."""

    def __init__(self, code: str) -> None:
        self.bodies = [m.start() for m in re.finditer(r"\)\s*(?:const\s*)?\{", code)]
        self.ends = [m.start() for m in re.finditer(";", code)]

    def opens_before_statement_end(self, at: int) -> bool:
        body = bisect.bisect_left(self.bodies, at)
        if body == len(self.bodies):
            return False
        end = bisect.bisect_left(self.ends, at)
        return end == len(self.ends) or self.bodies[body] < self.ends[end]
