"""Every error assay raises on purpose, under one root: ``except assay.errors.AssayError``.

Each class also keeps the built-in base callers caught before the root existed (a bad
evaluator signature is still a ``TypeError``, a missing extra an ``ImportError``):

    AssayError
    ├── MissingExtraError (ImportError)        an optional dependency is not installed
    │   └── EmbeddingsUnavailable              no embeddings provider can be loaded
    ├── EvaluatorSignatureError (TypeError)    no parameter of an evaluator can be bound
    ├── EvaluatorReturnError (TypeError)       an evaluator returned something unusable
    ├── TargetError (TypeError)                the target is not callable as a target
    ├── DataError (ValueError)                 ``data=`` cannot be read
    ├── ExampleInputError (ValueError)         an item of ``create_examples`` is not an example
    ├── ExperimentError (ValueError)           bad experiment name, or a resume that cannot be
    ├── ShardError (ValueError)                a shard that does not exist or fit the experiment's split
    ├── LeaseHeldError (RuntimeError)          another live process runs that shard (or experiment)
    ├── LeaseLostError (RuntimeError)          this run's lease expired and another process took over
    ├── UnknownEvaluatorName (ValueError)      ``evaluators=["..."]`` names no evaluator
    ├── EvaluatorInputError (ValueError)       a row lacks what a built-in evaluator reads
    │   ├── OpenAPIError                       an example's OpenAPI document is unusable
    │   └── TrajectoryError                    a tool-call trajectory cannot be read
    ├── InvalidJson (ValueError)               a JSON evaluator got text that is not JSON
    ├── CaseError (ValueError)                 a code test case is malformed
    ├── CalibrationError (ValueError)          no reference to calibrate a timeout on, or it fails
    ├── GenerationError (ValueError)           test cases cannot be generated as asked
    ├── UnknownLanguage (ValueError)           the sandbox does not run that language
    ├── UnsupportedMode (ValueError)           that language has no test-program mode
    ├── UIConfigError (ValueError)             the web UI cannot start with these settings
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
    │   ├── NotFoundError (LookupError)        no such dataset, example or experiment
    │   └── AlreadyExistsError                 a dataset of that name exists
    ├── LLMError                               a judge model could not give a usable answer
    │   ├── ModelNotConfiguredError (ValueError)
    │   ├── ModelCallError                     the call failed after its retries
    │   └── ModelReplyError                    the reply never matched the schema
    ├── ReplyCheckError (ValueError)           a caller's check refused a parsed reply (retried)
    ├── EmbeddingsError (RuntimeError)         an embeddings call failed
    ├── SandboxError (RuntimeError)            untrusted code could not be run safely
    │   ├── SandboxUnavailable                 no isolation is available on this machine
    │   ├── SandboxStartError                  the sandbox failed to start
    │   └── SandboxSetupError                  a business evaluator's sandbox cannot be prepared
    ├── ToolMissing (RuntimeError)             a formatter or linter is not installed, or none exists
    ├── QueryError                             a SQL query failed in its database
    │   ├── QueryTimeout
    │   ├── QueryTooLarge                      a value, row or result passed its byte limit
    │   └── QueryRefused                       the safety check refused the query
    ├── DatabaseUnavailable                    the SQL evaluator's database cannot be reached
    │   └── PrivilegedRole                     the PostgreSQL role may do more than read
    ├── FixtureError                           a SQL fixture cannot be loaded
    └── ReferenceQueryError                    the reference query itself fails

``AssayError`` and ``MissingExtraError`` live here; the others live beside the code that
raises them and are importable from this module too (their module loads on first use).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay._client_examples import ExampleInputError
    from assay.comparison.comparability import NotComparableError
    from assay.embeddings.base import EmbeddingsError, EmbeddingsUnavailable
    from assay.evaluation._binding import EvaluatorSignatureError
    from assay.evaluation._data import DataError
    from assay.evaluation._experiment import ExperimentError
    from assay.evaluation._lease import LeaseHeldError, LeaseLostError
    from assay.evaluation._names import UnknownEvaluatorName
    from assay.evaluation._returns import EvaluatorReturnError
    from assay.evaluation._runner import RowFailedError
    from assay.evaluation._shard import ShardError
    from assay.evaluation._target import TargetError
    from assay.evaluation._writer import StoreWriteError
    from assay.evaluators._fields import EvaluatorInputError
    from assay.evaluators._sandbox_site import SandboxSetupError
    from assay.evaluators.agents._calls import TrajectoryError
    from assay.evaluators.api._openapi import OpenAPIError
    from assay.evaluators.code._calibrate import CalibrationError
    from assay.evaluators.code._cases import CaseError
    from assay.evaluators.code._signature import GenerationError
    from assay.evaluators.code.quality import ToolMissing
    from assay.evaluators.sql._evaluator import ReferenceQueryError
    from assay.evaluators.sql.backends._pg_role import PrivilegedRole
    from assay.evaluators.sql.backends.base import (
        DatabaseUnavailable,
        FixtureError,
        QueryError,
        QueryRefused,
        QueryTimeout,
        QueryTooLarge,
    )
    from assay.evaluators.text.json import InvalidJson
    from assay.executors.errors import ExecutorError, RayExecutorError
    from assay.llm.errors import (
        LLMError,
        ModelCallError,
        ModelNotConfiguredError,
        ModelReplyError,
        ReplyCheckError,
    )
    from assay.sandbox.errors import SandboxError, SandboxStartError, SandboxUnavailable
    from assay.sandbox.languages import UnknownLanguage, UnsupportedMode
    from assay.service.errors import (
        EvaluatorSpecError,
        RemoteEvaluatorError,
        ServiceConfigError,
        WireError,
    )
    from assay.store.errors import AlreadyExistsError, NotFoundError, StoreError, StoreVersionError
    from assay.ui.errors import UIConfigError


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


_HOMES = {
    "ExampleInputError": "assay._client_examples",
    "NotComparableError": "assay.comparison.comparability",
    "EmbeddingsError": "assay.embeddings.base",
    "EmbeddingsUnavailable": "assay.embeddings.base",
    "EvaluatorSignatureError": "assay.evaluation._binding",
    "DataError": "assay.evaluation._data",
    "ExperimentError": "assay.evaluation._experiment",
    "LeaseHeldError": "assay.evaluation._lease",
    "LeaseLostError": "assay.evaluation._lease",
    "ShardError": "assay.evaluation._shard",
    "UnknownEvaluatorName": "assay.evaluation._names",
    "EvaluatorReturnError": "assay.evaluation._returns",
    "RowFailedError": "assay.evaluation._runner",
    "ExecutorError": "assay.executors.errors",
    "RayExecutorError": "assay.executors.errors",
    "TargetError": "assay.evaluation._target",
    "StoreWriteError": "assay.evaluation._writer",
    "EvaluatorInputError": "assay.evaluators._fields",
    "SandboxSetupError": "assay.evaluators._sandbox_site",
    "TrajectoryError": "assay.evaluators.agents._calls",
    "OpenAPIError": "assay.evaluators.api._openapi",
    "CaseError": "assay.evaluators.code._cases",
    "CalibrationError": "assay.evaluators.code._calibrate",
    "GenerationError": "assay.evaluators.code._signature",
    "ToolMissing": "assay.evaluators.code.quality",
    "ReferenceQueryError": "assay.evaluators.sql._evaluator",
    "DatabaseUnavailable": "assay.evaluators.sql.backends.base",
    "FixtureError": "assay.evaluators.sql.backends.base",
    "QueryError": "assay.evaluators.sql.backends.base",
    "QueryRefused": "assay.evaluators.sql.backends.base",
    "QueryTimeout": "assay.evaluators.sql.backends.base",
    "QueryTooLarge": "assay.evaluators.sql.backends.base",
    "PrivilegedRole": "assay.evaluators.sql.backends._pg_role",
    "InvalidJson": "assay.evaluators.text.json",
    "LLMError": "assay.llm.errors",
    "ModelCallError": "assay.llm.errors",
    "ModelNotConfiguredError": "assay.llm.errors",
    "ModelReplyError": "assay.llm.errors",
    "ReplyCheckError": "assay.llm.errors",
    "SandboxError": "assay.sandbox.errors",
    "SandboxStartError": "assay.sandbox.errors",
    "SandboxUnavailable": "assay.sandbox.errors",
    "UnknownLanguage": "assay.sandbox.languages",
    "UnsupportedMode": "assay.sandbox.languages",
    "AlreadyExistsError": "assay.store.errors",
    "NotFoundError": "assay.store.errors",
    "StoreError": "assay.store.errors",
    "StoreVersionError": "assay.store.errors",
    "UIConfigError": "assay.ui.errors",
    "EvaluatorSpecError": "assay.service.errors",
    "RemoteEvaluatorError": "assay.service.errors",
    "ServiceConfigError": "assay.service.errors",
    "WireError": "assay.service.errors",
}

__all__ = [
    "AssayError",
    "MissingExtraError",
    "require_extra",
    "AlreadyExistsError",
    "CalibrationError",
    "CaseError",
    "DataError",
    "DatabaseUnavailable",
    "EmbeddingsError",
    "EmbeddingsUnavailable",
    "EvaluatorInputError",
    "EvaluatorReturnError",
    "EvaluatorSignatureError",
    "ExampleInputError",
    "ExperimentError",
    "FixtureError",
    "GenerationError",
    "InvalidJson",
    "LLMError",
    "ModelCallError",
    "ModelNotConfiguredError",
    "ModelReplyError",
    "NotComparableError",
    "NotFoundError",
    "PrivilegedRole",
    "QueryError",
    "QueryRefused",
    "QueryTimeout",
    "QueryTooLarge",
    "ReferenceQueryError",
    "ReplyCheckError",
    "RowFailedError",
    "SandboxError",
    "SandboxStartError",
    "SandboxUnavailable",
    "StoreError",
    "StoreVersionError",
    "StoreWriteError",
    "TargetError",
    "ToolMissing",
    "UIConfigError",
    "UnknownEvaluatorName",
    "UnknownLanguage",
    "UnsupportedMode",
    "OpenAPIError",
    "SandboxSetupError",
    "TrajectoryError",
    "EvaluatorSpecError",
    "RemoteEvaluatorError",
    "ServiceConfigError",
    "WireError",
    "LeaseHeldError",
    "LeaseLostError",
    "ShardError",
    "ExecutorError",
    "RayExecutorError",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.errors' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
