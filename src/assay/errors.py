"""Every error assay raises on purpose, under one root: ``except assay.errors.AssayError``.

Every class is defined here, and this module imports nothing else of assay, so catching one
never loads an optional extra (``except QueryTimeoutError`` works with only the core
installed). Each is also importable from the module that raises it, as before.

Each class keeps the built-in base callers caught before the root existed (a bad evaluator
signature is still a ``TypeError``, a missing extra an ``ImportError``):

    AssayError
    ├── MissingExtraError (ImportError)        an optional dependency is not installed
    │   └── EmbeddingsUnavailableError         no embeddings provider can be loaded
    ├── EvaluatorSignatureError (TypeError, ValueError) an evaluator's parameters cannot be bound
    ├── EvaluatorReturnError (TypeError)       an evaluator returned something unusable
    ├── TargetError (TypeError, ValueError)    the target is not callable as a target
    ├── DataError (ValueError)                 ``data=`` cannot be read
    ├── ExampleInputError (ValueError)         an item of ``create_examples`` is not an example
    ├── AttachmentError (ValueError)           an example's attachment is unreadable or too large
    │   └── AttachmentTooLargeError            over ``ASSAY_MAX_ATTACHMENT_BYTES``
    ├── ExperimentError (ValueError)           bad experiment name, or a resume that cannot be
    ├── ShardError (ValueError)                a shard that does not exist or fit the experiment's split
    ├── LeaseHeldError (RuntimeError)          another live process runs that shard (or experiment)
    ├── LeaseLostError (RuntimeError)          this run's lease expired and another process took over
    ├── UnknownEvaluatorNameError (ValueError) ``evaluators=["..."]`` names no evaluator
    ├── EvaluatorInputError (ValueError)       a row lacks what a built-in evaluator reads
    │   ├── HostPathRefusedError               an input named a host file where only content may travel
    │   ├── OpenAPIError                       an example's OpenAPI document is unusable
    │   └── TrajectoryError                    a tool-call trajectory cannot be read
    ├── InvalidJsonError (ValueError)          a JSON evaluator got text that is not JSON
    ├── CaseError (ValueError)                 a code test case is malformed
    ├── CalibrationError (ValueError)          no reference to calibrate a timeout on, or it fails
    ├── CheckerProgramError (ValueError)       a stdin/stdout problem's checker program does not build
    ├── GenerationError (ValueError)           test cases cannot be generated as asked
    ├── UnknownLanguageError (ValueError)      the sandbox does not run that language
    ├── UnsupportedModeError (ValueError)      that language has no test-program mode
    ├── UIConfigError (ValueError)             the web UI cannot start with these settings
    ├── PortInUseError (ValueError)            a server's port is taken (names it and a free one)
    ├── CsrfRefusedError (PermissionError)     a UI write without this session's token (answered 403)
    ├── ServiceConfigError (ValueError)        the evaluator service cannot start with these settings
    ├── EvaluatorSpecError (ValueError)        ``serve-evaluators MODULE:EVALUATORS`` names nothing usable
    ├── WireError (ValueError)                 an evaluator service sent a body that is not its JSON
    ├── RemoteEvaluatorError (RuntimeError)    a remote evaluator refused or failed after its retries
    ├── NotComparableError (ValueError)        experiments that cannot be compared (names why)
    ├── RowFailedError (RuntimeError)          a row failed under ``error_handling="raise"``
    ├── ExecutorError (ValueError)             an executor is misconfigured (``ASSAY_EXECUTOR``, options)
    ├── RayExecutorError (RuntimeError)        a Ray run cannot go on (workers keep dying, code cannot ship)
    ├── StoreError (RuntimeError)              the store cannot do what was asked
    │   ├── StoreVersionError                  the database was written by a newer assay
    │   ├── StoreWriteError                    writing results failed; the run stops
    │   ├── LeaseFencedError                   a write named a lease another run took over: refused
    │   ├── StoreCorruptError                  the store file is damaged: not written to, figures not shown
    │   ├── StorageFault                       disk full, read-only, I/O error, locked: named, resumable
    │   ├── NotFoundError (LookupError)        no such dataset, example or experiment
    │   └── AlreadyExistsError                 a dataset of that name exists
    ├── BudgetExhaustedError                   the experiment's judge budget (``max_cost``) is spent
    ├── LLMError                               a judge model could not give a usable answer
    │   ├── ModelNotConfiguredError (ValueError)
    │   ├── ModelCallError                     the call failed after its retries
    │   └── ModelReplyError                    the reply never matched the schema
    ├── ReplyCheckError (ValueError)           a caller's check refused a parsed reply (retried)
    ├── EmbeddingsError (RuntimeError)         an embeddings call failed
    ├── SandboxError (RuntimeError)            untrusted code could not be run safely
    │   ├── SandboxUnavailableError            no isolation is available on this machine
    │   ├── SandboxStartError                  the sandbox failed to start
    │   └── SandboxSetupError                  a business evaluator's sandbox cannot be prepared
    ├── ToolMissingError (RuntimeError)        a formatter or linter is not installed, or none exists
    ├── QueryError                             a SQL query failed in its database
    │   ├── QueryTimeoutError
    │   ├── QueryTooLargeError                 a value, row or result passed its byte limit
    │   └── QueryRefusedError                  the safety check refused the query
    ├── DatabaseUnavailableError               the SQL evaluator's database cannot be reached
    │   └── PrivilegedRoleError                the PostgreSQL role may do more than read
    ├── FixtureError                           a SQL fixture cannot be loaded
    └── ReferenceQueryError                    the reference query itself fails

Names settled at 0.1.0 end in ``Error``; the earlier names stay as aliases of the same class
(``QueryTimeout is QueryTimeoutError``), listed in ``ALIASES``.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class AssayError(Exception):
    """The root of every error assay raises on purpose."""


class MissingExtraError(AssayError, ImportError):
    """An optional dependency is not installed; the message names the ``pip install`` line."""


def require_extra(module: str, extra: str, *, feature: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``pip install 'assay[extra]'``.

    ``feature`` says what needs it (default: the extra's name), for the message:
    ``"the SQL evaluators need sqlglot: pip install 'assay[sql]'"``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name or module.partition(".")[0]
        what = feature or f"the {extra!r} extra"
        raise MissingExtraError(
            f"{what} needs {missing}, which is not installed: pip install 'assay[{extra}]'",
            name=missing,
        ) from exc


class EmbeddingsUnavailableError(MissingExtraError):
    """No embeddings provider can be used here (an extra is missing or nothing is configured)."""


# --- evaluate(): its arguments, its data, its run ---------------------------------------


class EvaluatorSignatureError(AssayError, TypeError, ValueError):
    """An evaluator's parameters cannot be bound to what assay passes.

    Also a ``ValueError`` whose message starts "Invalid evaluator function", as LangSmith's is.
    """

    def __init__(self, message: str) -> None:
        super().__init__(f"Invalid evaluator function: {message}")


class EvaluatorReturnError(AssayError, TypeError):
    """An evaluator returned something that cannot be read as a result."""


class TargetError(AssayError, TypeError, ValueError):
    """The target is not something assay can call (also a ``ValueError``, as LangSmith's is)."""


class DataError(AssayError, ValueError):
    """``data=`` could not be read; the message names the file and line, or the item."""


class ExampleInputError(AssayError, ValueError):
    """An item of ``create_examples`` cannot be an example; nothing was stored."""


class AttachmentError(AssayError, ValueError):
    """An example's attachment cannot be stored (not a file's bytes, unreadable, or over
    ``ASSAY_MAX_ATTACHMENT_BYTES``); nothing was stored."""


class AttachmentTooLargeError(AttachmentError):
    """An attachment is larger than ``ASSAY_MAX_ATTACHMENT_BYTES``; nothing was stored."""


class ExperimentError(AssayError, ValueError):
    """An experiment name that clashes, or a resume that would not match the original."""


class ShardError(AssayError, ValueError):
    """A shard that does not exist, or that does not match the experiment's split."""


class LeaseHeldError(AssayError, RuntimeError):
    """Another live process holds the lease of the shard this run asked for."""


class LeaseLostError(AssayError, RuntimeError):
    """This run's lease expired and another process took the shard over."""


class UnknownEvaluatorNameError(AssayError, ValueError):
    """A string evaluator name that is not in the table."""


class RowFailedError(AssayError, RuntimeError):
    """With ``error_handling="raise"``: the first target or evaluator error."""


class ExecutorError(AssayError, ValueError):
    """An executor was misconfigured (an unknown ``ASSAY_EXECUTOR``, a bad argument)."""


class RayExecutorError(AssayError, RuntimeError):
    """The Ray run could not go on: a batch's workers kept dying, the target could not be
    sent to the workers, or the workers could not load it."""


class NotComparableError(AssayError, ValueError):
    """The experiments cannot be compared; the message names what differs."""


# --- the built-in evaluators ------------------------------------------------------------


class EvaluatorInputError(AssayError, ValueError):
    """The run or the example does not hold what the evaluator needs."""


class HostPathRefusedError(EvaluatorInputError):
    """An input named a host file where only content may travel (over the service)."""


class OpenAPIError(EvaluatorInputError):
    """The OpenAPI document cannot be used; the message says where (line, or JSON path)."""


class TrajectoryError(EvaluatorInputError):
    """A trajectory cannot be read; the message names the field and the position."""


class InvalidJsonError(AssayError, ValueError):
    """Text that is not JSON; ``line`` and ``column`` (1-based, 0 when unknown) say where."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.line, self.column = line, column


class CaseError(AssayError, ValueError):
    """The run or the example cannot be used; the message says which and why."""

    def __init__(self, message: str, feedback: str = "Missing test cases.") -> None:
        super().__init__(message)
        self.feedback = feedback


class CalibrationError(AssayError, ValueError):
    """The reference cannot calibrate: there is none, or it fails its own tests."""


class CheckerProgramError(AssayError, ValueError):
    """A problem's checker program (its special judge) does not compile or cannot run:
    the dataset's fault, so an error of the evaluator, not a score of the candidate."""


class GenerationError(AssayError, ValueError):
    """Test cases cannot be generated as asked (no typed signature to draw arguments from,
    no reference, a reference that does not load); the message says what is missing."""


class ToolMissingError(AssayError, RuntimeError):
    """A formatter or linter is not installed, or none exists for the language."""


# --- the apps: web UI and evaluator service ---------------------------------------------


class UIConfigError(AssayError, ValueError):
    """A server setting refused for safety (a public host without a token, a weak token)."""


class PortInUseError(AssayError, ValueError):
    """The port ``assay ui`` or ``assay serve-evaluators`` was to listen on is taken."""


class CsrfRefusedError(AssayError, PermissionError):
    """A web UI write without a valid token for this browser session: answered 403."""


class ServiceConfigError(AssayError, ValueError):
    """A service setting refused for safety (a public host without a token, a weak token)."""


class EvaluatorSpecError(AssayError, ValueError):
    """A ``MODULE:EVALUATORS`` spec that does not name a usable set of evaluators."""


class WireError(AssayError, ValueError):
    """A reply that is not the service's JSON (names what was wrong)."""


class RemoteEvaluatorError(AssayError, RuntimeError):
    """The service could not give a result: refused, unreachable, or failing after retries."""


# --- the store --------------------------------------------------------------------------


class StoreError(AssayError, RuntimeError):
    """Base class for store errors."""


class StoreVersionError(StoreError):
    """The database was written by a newer assay."""


class StoreWriteError(StoreError):
    """A batch of rows could not be written; rows stored before it are kept."""


class LeaseFencedError(StoreError):
    """A write named a lease that is no longer its run's: nothing of it was stored."""


class StoreCorruptError(StoreError):
    """The store's file is damaged: it is refused for writing until recovered."""


class StorageFault(StoreError):
    """The store could not be written or read for a reason outside assay (disk, locks)."""


class NotFoundError(StoreError, LookupError):
    """A dataset, example or experiment that does not exist."""


class AlreadyExistsError(StoreError):
    """A name that is already taken."""


# --- services: judge models, embeddings, the sandbox ------------------------------------


class BudgetExhaustedError(AssayError):
    """The experiment's judge budget is spent; the row was not started."""


class LLMError(AssayError):
    """Base of every error raised by ``assay.llm``."""


class ModelNotConfiguredError(LLMError, ValueError):
    """No judge model was given and none is configured in the environment."""


class ModelCallError(LLMError):
    """The model server failed the request (after retries, where the failure was retryable)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class ModelReplyError(LLMError):
    """The model answered, but never with a reply that parses and matches the schema."""

    def __init__(self, message: str, *, reply: str = "") -> None:
        super().__init__(message)
        self.reply = reply


class ReplyCheckError(AssayError, ValueError):
    """Raised by a caller's check of a parsed reply: the reply is retried like a malformed one."""


class EmbeddingsError(AssayError, RuntimeError):
    """An embeddings provider failed (the message names the provider, never a secret)."""


class SandboxError(AssayError, RuntimeError):
    """The sandbox itself failed (not the code running in it)."""


class SandboxUnavailableError(SandboxError):
    """No backend can run here, or none meets the required isolation level."""


class SandboxStartError(SandboxError):
    """A sandbox process did not come up; the message carries its stderr."""


class SandboxSetupError(SandboxError):
    """The sandbox cannot be prepared for a generated program (nothing generated ran)."""


class UnknownLanguageError(AssayError, ValueError):
    """A language the sandbox does not run; the message lists the ones it does."""


class UnsupportedModeError(AssayError, ValueError):
    """A language without the test-program mode was given a test program."""


# --- the SQL evaluators' databases ------------------------------------------------------


class QueryError(AssayError):
    """The database rejected the query or failed while running it."""


class QueryTimeoutError(QueryError):
    """The query ran past its deadline and was interrupted."""


class QueryTooLargeError(QueryError):
    """A value, a row or the whole result passed its byte limit while being fetched."""


class QueryRefusedError(QueryError):
    """The database's own read-only guard stopped the query."""


class DatabaseUnavailableError(AssayError):
    """The database could not be opened or reached (not the query's fault)."""


class PrivilegedRoleError(DatabaseUnavailableError):
    """The role in the URL may do more than read: evaluated queries must not run as it."""


class FixtureError(AssayError):
    """An example's ``schema_sql``/``seed_sql`` could not be built into a database."""


class ReferenceQueryError(AssayError):
    """The example's reference query could not give a result: the dataset, not the model, is at fault."""


# The names used before 0.1.0 settled on the ``Error`` suffix: the same classes.
EmbeddingsUnavailable = EmbeddingsUnavailableError
UnknownEvaluatorName = UnknownEvaluatorNameError
InvalidJson = InvalidJsonError
ToolMissing = ToolMissingError
SandboxUnavailable = SandboxUnavailableError
UnknownLanguage = UnknownLanguageError
UnsupportedMode = UnsupportedModeError
QueryTimeout = QueryTimeoutError
QueryTooLarge = QueryTooLargeError
QueryRefused = QueryRefusedError
DatabaseUnavailable = DatabaseUnavailableError
PrivilegedRole = PrivilegedRoleError
BudgetExhausted = BudgetExhaustedError
HostPathRefused = HostPathRefusedError

#: old name -> settled name
ALIASES = {
    "BudgetExhausted": "BudgetExhaustedError",
    "HostPathRefused": "HostPathRefusedError",
    "EmbeddingsUnavailable": "EmbeddingsUnavailableError",
    "UnknownEvaluatorName": "UnknownEvaluatorNameError",
    "InvalidJson": "InvalidJsonError",
    "ToolMissing": "ToolMissingError",
    "SandboxUnavailable": "SandboxUnavailableError",
    "UnknownLanguage": "UnknownLanguageError",
    "UnsupportedMode": "UnsupportedModeError",
    "QueryTimeout": "QueryTimeoutError",
    "QueryTooLarge": "QueryTooLargeError",
    "QueryRefused": "QueryRefusedError",
    "DatabaseUnavailable": "DatabaseUnavailableError",
    "PrivilegedRole": "PrivilegedRoleError",
}

__all__ = [
    "AlreadyExistsError",
    "AssayError",
    "AttachmentError",
    "AttachmentTooLargeError",
    "CalibrationError",
    "CheckerProgramError",
    "CsrfRefusedError",
    "CaseError",
    "DataError",
    "DatabaseUnavailableError",
    "EmbeddingsError",
    "EmbeddingsUnavailableError",
    "BudgetExhaustedError",
    "EvaluatorInputError",
    "EvaluatorReturnError",
    "EvaluatorSignatureError",
    "EvaluatorSpecError",
    "ExampleInputError",
    "ExecutorError",
    "ExperimentError",
    "FixtureError",
    "GenerationError",
    "HostPathRefusedError",
    "InvalidJsonError",
    "LLMError",
    "LeaseFencedError",
    "LeaseHeldError",
    "LeaseLostError",
    "MissingExtraError",
    "ModelCallError",
    "ModelNotConfiguredError",
    "ModelReplyError",
    "NotComparableError",
    "NotFoundError",
    "OpenAPIError",
    "PortInUseError",
    "PrivilegedRoleError",
    "QueryError",
    "QueryRefusedError",
    "QueryTimeoutError",
    "QueryTooLargeError",
    "RayExecutorError",
    "ReferenceQueryError",
    "RemoteEvaluatorError",
    "ReplyCheckError",
    "RowFailedError",
    "SandboxError",
    "SandboxSetupError",
    "SandboxStartError",
    "SandboxUnavailableError",
    "ServiceConfigError",
    "ShardError",
    "StorageFault",
    "StoreCorruptError",
    "StoreError",
    "StoreVersionError",
    "StoreWriteError",
    "TargetError",
    "ToolMissingError",
    "TrajectoryError",
    "UIConfigError",
    "UnknownEvaluatorNameError",
    "UnknownLanguageError",
    "UnsupportedModeError",
    "WireError",
    "require_extra",
    *ALIASES,
]
