"""The built-in evaluators a service serves with ``--builtin``: every one that needs no model.

Served under their short names (``code_correctness``, ``exact_match``...), the names
``evaluate(evaluators=[...])`` accepts. The judges (they need a chat model configured in
the server's environment) and ``embedding_distance`` (an embedding model) are served
only when named, e.g. ``--builtin qa,code_correctness``.
"""

from __future__ import annotations

from typing import Any

from assay.errors import EvaluatorSpecError, MissingExtraError
from assay.evaluation._names import EVALUATOR_NAMES, resolve_evaluator_name

__all__ = ["MODEL_BACKED", "builtin_evaluators", "default_builtin_names"]

#: built-in names that call a model, left out of the default set
MODEL_BACKED = frozenset({"qa", "cot_qa", "context_qa", "criteria", "labeled_criteria", "embedding_distance"})


def default_builtin_names() -> list[str]:
    return [name for name in EVALUATOR_NAMES if name not in MODEL_BACKED]


def builtin_evaluators(names: list[str] | None = None) -> dict[str, Any]:
    """Instances of the named built-ins (default: every one without a model).

    In the default set an evaluator whose extra is not installed is left out; one that is
    named explicitly must load.
    """
    wanted = names if names else default_builtin_names()
    unknown = [name for name in wanted if name not in EVALUATOR_NAMES]
    if unknown:
        raise EvaluatorSpecError(
            f"unknown built-in evaluator(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(EVALUATOR_NAMES)}"
        )
    loaded: dict[str, Any] = {}
    for name in wanted:
        try:
            loaded[name] = resolve_evaluator_name(name)
        except MissingExtraError:
            if names:
                raise
    return loaded
