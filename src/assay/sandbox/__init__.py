"""Run untrusted code in an OS-level sandbox and decide its verdict in the parent.

Backends, strongest first: bubblewrap, Linux namespaces via ``unshare``, and plain
resource limits as the last resort. See ``docs/code.md``.
"""

from assay.errors import (
    SandboxError,
    SandboxStartError,
    SandboxUnavailableError,
    UnknownLanguageError,
    UnsupportedModeError,
)
from assay.sandbox._pool import SandboxPool, choose_backend, get_pool, shutdown_pools
from assay.sandbox._script_report import require_ready
from assay.sandbox._site import DATA_TOOLS, TEST_TOOLS, cache_root, sandbox_site
from assay.sandbox._streams import OutputSink, Spool
from assay.sandbox.config import BACKEND_LEVELS, Limits, SandboxConfig
from assay.sandbox.equality import values_equal
from assay.sandbox.errors import SandboxIsolationWarning
from assay.sandbox.languages import LANGUAGES, Language, get_language, strip_fences
from assay.sandbox.protections import Protections
from assay.sandbox.results import (
    Call,
    CallOutcome,
    CheckerRun,
    FunctionRun,
    LoadFailure,
    Output,
    ProgramRun,
    ScriptRun,
    StdioBuild,
    StdioTestRun,
)

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
SandboxUnavailable = SandboxUnavailableError
UnknownLanguage = UnknownLanguageError
UnsupportedMode = UnsupportedModeError

__all__ = [
    "DATA_TOOLS",
    "TEST_TOOLS",
    "cache_root",
    "require_ready",
    "sandbox_site",
    "BACKEND_LEVELS",
    "Call",
    "CallOutcome",
    "CheckerRun",
    "FunctionRun",
    "LANGUAGES",
    "Language",
    "Limits",
    "LoadFailure",
    "Output",
    "ProgramRun",
    "Protections",
    "SandboxConfig",
    "SandboxError",
    "SandboxIsolationWarning",
    "SandboxPool",
    "SandboxStartError",
    "OutputSink",
    "Spool",
    "SandboxUnavailableError",
    "ScriptRun",
    "StdioBuild",
    "StdioTestRun",
    "UnknownLanguageError",
    "UnsupportedModeError",
    "choose_backend",
    "get_language",
    "get_pool",
    "shutdown_pools",
    "strip_fences",
    "values_equal",
]
