"""The built-in evaluators a service serves with ``--builtin``: the ones safe remotely.

A caller of the service is someone else. ``REMOTE_SAFE`` are the built-ins that need no
model, run candidate code only in the sandbox and read no host file (inputs by host path
are refused for every evaluation the service runs, see ``assay.evaluators.host_files``);
they are served by default, and docs/service.md lists exactly these. Every other built-in
carries a risk for the server's owner (``RISKS``) and is served only when named together
with the opt-in that names the risk, e.g. ``--builtin qa --allow-model-calls``.
"""

from __future__ import annotations

from typing import Any

from assay.errors import EvaluatorSpecError, MissingExtraError
from assay.evaluation.evaluator import EVALUATOR_NAMES, resolve_evaluator_name

__all__ = [
    "MODEL_OPT_IN",
    "NOT_SERVED",
    "REMOTE_SAFE",
    "RISKS",
    "builtin_evaluators",
    "default_builtin_names",
]

#: served by default, in this order (docs/service.md lists the same names)
REMOTE_SAFE = (
    "exact_match",
    "regex_match",
    "string_distance",
    "json_validity",
    "json_equality",
    "bleu",
    "rouge",
    "completeness",
    "content_similarity",
    "keyword_coverage",
    "textual_difference",
    "tone",
    "code_correctness",
    "ruff_lint",
    "bandit_security",
    "sql_validity",
    "unit_tests",
    "data_transformation",
    "api_calls",
    "trajectory_match",
    "tool_code",
)

MODEL_OPT_IN = "allow_model_calls"  # the keyword; the command's flag is --allow-model-calls
_MODEL_RISK = "calls the model configured in the server's environment (its credentials, its bill) with the caller's text"

#: every built-in not in REMOTE_SAFE, and what serving it exposes
RISKS: dict[str, str] = {
    name: _MODEL_RISK
    for name in ("qa", "cot_qa", "context_qa", "criteria", "labeled_criteria", "embedding_distance")
}


#: built-ins never served, and why
NOT_SERVED: dict[str, str] = {
    "program": "its tests may name input and output files, which would be read from the server's disk",
}


def default_builtin_names() -> list[str]:
    return list(REMOTE_SAFE)


def builtin_evaluators(names: list[str] | None = None, *, allow_model_calls: bool = False) -> dict[str, Any]:
    """Instances of the named built-ins (default: every one in ``REMOTE_SAFE``).

    In the default set an evaluator whose extra is not installed is left out; one that is
    named explicitly must load. A named built-in outside ``REMOTE_SAFE`` needs the opt-in
    for its risk (``allow_model_calls=True``), else ``EvaluatorSpecError`` names the risk.
    """
    wanted = names if names else default_builtin_names()
    unknown = [name for name in wanted if name not in EVALUATOR_NAMES]
    if unknown:
        raise EvaluatorSpecError(
            f"unknown built-in evaluator(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(EVALUATOR_NAMES)}"
        )
    _check_opt_in(wanted, allow_model_calls)
    loaded: dict[str, Any] = {}
    for name in wanted:
        try:
            loaded[name] = _REMOTE_FORMS[name]() if name in _REMOTE_FORMS else resolve_evaluator_name(name)
        except MissingExtraError:
            if names:
                raise
    return loaded


def _regex_in_linear_time() -> Any:
    """The caller's pattern matched by RE2: linear in the text whatever the pattern, where
    a backtracking engine spends its whole timeout (the server's CPU) on ``(a+)+$``."""
    from assay.evaluators.text.string import RegexEvaluator

    return RegexEvaluator(engine="re2")


#: built-ins served in another form than the local one
_REMOTE_FORMS = {"regex_match": _regex_in_linear_time}


def _check_opt_in(wanted: list[str], allow_model_calls: bool) -> None:
    refused = [name for name in wanted if name in NOT_SERVED]
    if refused:
        raise EvaluatorSpecError(f"{refused[0]} is not served: {NOT_SERVED[refused[0]]}; run it locally")
    risky = [name for name in wanted if name not in REMOTE_SAFE]
    unlisted = [name for name in risky if name not in RISKS]
    if unlisted:  # a new built-in must be classified before it can be served
        raise EvaluatorSpecError(f"built-in(s) {', '.join(unlisted)} are not classified for serving")
    if risky and not allow_model_calls:
        raise EvaluatorSpecError(
            f"{', '.join(risky)} {'is' if len(risky) == 1 else 'are'} not served by default: "
            f"{RISKS[risky[0]]}; add --allow-model-calls (allow_model_calls=True) to serve "
            f"{'it' if len(risky) == 1 else 'them'} anyway"
        )
