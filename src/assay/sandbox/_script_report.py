"""Report lines printed by the programs the business evaluators run in the sandbox.

Each program prints ``<mark>{"ready": true}`` once its own setup is done and before any
generated code runs, or ``<mark>{"setup_error": "..."}``. No ready line means the sandbox
could not be prepared (a missing package, no loopback...): that is the evaluator's
failure, an error, never a score the generated code earned.
"""

from __future__ import annotations

import json
from typing import Any

from assay.errors import SandboxSetupError
from assay.sandbox.results import ScriptRun


def marked_lines(stdout: str, mark: str) -> list[dict[str, Any]]:
    """The JSON objects on lines starting with ``mark`` (split on newlines only: the
    mark's record separator would split ``str.splitlines``)."""
    lines = []
    for raw in stdout.split("\n"):
        if raw.startswith(mark):
            try:
                line = json.loads(raw[len(mark) :])
            except (ValueError, RecursionError):  # a line nested past the parser's depth
                continue
            if isinstance(line, dict):
                lines.append(line)
    return lines


def require_ready(done: ScriptRun, mark: str, what: str) -> list[dict[str, Any]]:
    """The report lines after the ready line; raise if the program never got ready."""
    lines = marked_lines(done.output.stdout, mark)
    for index, line in enumerate(lines):
        if line.get("ready") is True:
            return lines[index + 1 :]
        if "setup_error" in line:
            raise SandboxSetupError(f"the sandbox could not be prepared for {what}: {line['setup_error']}")
    tail = done.output.stderr.strip()[-800:] or f"exit {done.exit_code}"
    raise SandboxSetupError(f"the sandbox could not be prepared for {what}: {tail}")
