"""Test cases generated for a problem: inputs from a judge model or from Hypothesis, expected
outputs from the reference solution run in the sandbox.

``generate_test_cases(example, model=..., n=..., reference=...)``:

1. proposes ``n`` inputs: the judge model (structured output) when ``model`` is given, else
   Hypothesis strategies read from the reference's typed signature (no model);
2. runs the reference on them in the sandbox, twice: the expected output is what the
   reference returned (a model's claimed output is never used when there is a reference),
   and a case is dropped when the reference fails on it, or returns two different values;
3. stores the kept cases in ``example.inputs["generated_test_cases"]`` as a new version of
   the example's dataset, so later experiments run on the same cases.

Asking again for the same generation (same problem, reference, model, ``n``, seed) returns
the stored cases at once: no model call, no sandbox.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from assay.errors import AssayError, GenerationError
from assay.evaluators.code._calibrate import reference_code_of
from assay.evaluators.code._cases import GENERATED_KEY
from assay.evaluators.code._proposals import NO_EXPECTED, Proposal, ask_model, draw_property_cases
from assay.evaluators.code._signature import read_signature, strategies_for
from assay.llm.resolve import JudgeModel, resolve_client
from assay.sandbox import Call, Limits, SandboxConfig, get_language, get_pool
from assay.sandbox.equality import Tolerance, values_equal
from assay.sandbox.harness import codec
from assay.schemas import Example
from assay.store.base import Store

__all__ = ["GeneratedCases", "GenerationError", "GenerationOptions", "generate_test_cases"]

EXACT = Tolerance(rel_tol=0.0, abs_tol=0.0, zero_tol=0.0)
PROBLEM_KEYS = ("question", "prompt", "problem", "description")


@dataclass(frozen=True)
class GenerationOptions:
    """``func_name``/``language``: default from the example's inputs (else ``solution`` and
    python). ``timeout``: seconds for one run of the reference over all cases. ``seed``:
    Hypothesis's seed (the same seed draws the same inputs)."""

    func_name: str | None = None
    language: str | None = None
    sandbox: SandboxConfig | None = None
    limits: Limits | None = None
    timeout: float = 10.0
    seed: int = 0


@dataclass
class GeneratedCases:
    """``cases``: ``{"args": [...], "expected_output": ...}`` each. ``dropped``: the inputs
    left out and why. ``version``: the dataset version that stores them (None when the
    example is not in a store, or they were ``reused``: already stored, nothing was run)."""

    cases: list[dict[str, Any]]
    dropped: list[dict[str, Any]] = field(default_factory=list)
    source: str = "model"
    version: int | None = None
    example: Example | None = None
    reused: bool = False


def generate_test_cases(
    problem: Example | dict[str, Any],
    *,
    model: JudgeModel = None,
    n: int = 10,
    reference: str | None = None,
    store: Store | None = None,
    options: GenerationOptions | None = None,
) -> GeneratedCases:
    """Generate ``n`` test cases for ``problem`` (an ``Example``, or its inputs as a dict).

    ``model``: the judge model proposing inputs (``"openai/<name>"``, a ``ChatModel``, a chat
    client); None draws them with Hypothesis from the reference's annotations.
    ``reference``: the reference solution (default: the example's ``reference_code`` or
    ``canonical_solution``); without one, only a model's claimed outputs are available,
    and they are used as they are (``source == "model-claimed"``).
    ``store``: where the example lives (default: the current store).
    """
    if n < 1:
        raise GenerationError(f"n must be a positive number of cases, got {n!r}")
    opts = options or GenerationOptions()
    example = problem if isinstance(problem, Example) else Example(inputs=dict(problem))
    inputs = example.inputs or {}
    func_name = opts.func_name or str(inputs.get("func_name") or "solution")
    language = get_language(opts.language or str(inputs.get("language") or "python"))
    code = reference if reference is not None else _reference_or_none(example)
    key = _generation_key(model, n, code, func_name, language.name, inputs, opts.seed)
    stored = _stored_generation(example, store, key)
    if stored is not None:
        return stored
    proposals = _propose(model, n, code, func_name, _problem_text(inputs), opts.seed)
    dropped: list[dict[str, Any]] = []
    if code is None:
        cases, source = _claimed_cases(proposals), "model-claimed"
    else:
        cases, dropped = _expected_from_reference(proposals, code, func_name, language.name, opts)
        source = "model" if model is not None else "property"
    result = GeneratedCases(cases, dropped, source)
    _store(example, store, key, result)
    return result


def _reference_or_none(example: Example) -> str | None:
    try:
        return reference_code_of(example, None)
    except AssayError:
        return None


def _problem_text(inputs: dict[str, Any]) -> str:
    parts = [str(inputs[k]) for k in PROBLEM_KEYS if isinstance(inputs.get(k), str)]
    return "\n\n".join(parts) or "(no description: infer it from the function's name and signature)"


def _propose(
    model: JudgeModel, n: int, code: str | None, func_name: str, problem: str, seed: int
) -> list[Proposal]:
    if model is not None:
        signature = func_name
        if code is not None:
            try:
                signature = read_signature(code, func_name).describe()
            except GenerationError:
                pass  # untyped (or not Python): the model goes by the name and the problem
        return ask_model(model, problem, signature, n)
    if code is None:
        raise GenerationError("without a model, generated cases need a reference solution to read types from")
    try:
        strategies = strategies_for(read_signature(code, func_name))
    except GenerationError as exc:
        raise GenerationError(f"property-based cases need a typed signature: {exc}") from None
    return draw_property_cases(strategies, n, seed)


def _claimed_cases(proposals: list[Proposal]) -> list[dict[str, Any]]:
    return [{"args": p.args, "expected_output": p.claimed} for p in proposals if p.claimed is not NO_EXPECTED]


def _expected_from_reference(
    proposals: list[Proposal], code: str, func_name: str, language: str, opts: GenerationOptions
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run the reference twice on every input; keep what it answers the same both times."""
    calls: list[Call] = []
    dropped: list[dict[str, Any]] = []
    kept_proposals: list[Proposal] = []
    for proposal in proposals:
        try:
            codec.encode(proposal.args)
        except codec.UnsupportedValue as exc:
            dropped.append({"args": repr(proposal.args)[:200], "reason": f"not plain data: {exc}"})
            continue
        calls.append(Call(tuple(proposal.args)))
        kept_proposals.append(proposal)
    pool = get_pool(opts.sandbox or SandboxConfig())
    lang = get_language(language)
    runs = [
        pool.run_function(lang, code, func_name, calls, opts.timeout, opts.limits or Limits())
        for _ in range(2)
    ]
    for run in runs:
        if run.load_failure is not None:
            raise GenerationError(f"the reference solution does not load: {run.load_failure.message}")
    cases = []
    for proposal, first, second in zip(kept_proposals, runs[0].outcomes, runs[1].outcomes):
        reason = _drop_reason(first, second)
        if reason:
            dropped.append({"args": proposal.args, "reason": reason})
        else:
            cases.append({"args": proposal.args, "expected_output": first.value})
    return cases, dropped


def _drop_reason(first: Any, second: Any) -> str | None:
    for outcome in (first, second):
        if not outcome.ok:
            return f"the reference failed: {outcome.status} {outcome.error_type or ''} {outcome.message or ''}".strip()
    try:
        same = values_equal(first.value, second.value, EXACT)
    except Exception:  # noqa: BLE001 - a value that cannot be compared cannot be expected
        same = False
    return None if same else "the reference is not deterministic on it (two runs, two answers)"


def _generation_key(
    model: JudgeModel,
    n: int,
    code: str | None,
    func_name: str,
    language: str,
    inputs: dict[str, Any],
    seed: int,
) -> str:
    problem = {k: v for k, v in inputs.items() if k != GENERATED_KEY}
    material = {
        "model": resolve_client(model).cache_identity() if model is not None else None,
        "n": n,
        "code": code,
        "func_name": func_name,
        "language": language,
        "problem": problem,
        "seed": seed,
    }
    return hashlib.sha256(orjson.dumps(material, option=orjson.OPT_SORT_KEYS, default=repr)).hexdigest()


def _store_of(example: Example, store: Store | None) -> Store | None:
    if example.dataset_id is None:
        return None
    if store is not None:
        return store
    from assay.store.current import current_store

    return current_store()


def _stored_generation(example: Example, store: Store | None, key: str) -> GeneratedCases | None:
    target = _store_of(example, store)
    current = target.get_example(example.id) if target is not None else None
    info = ((current or example).metadata or {}).get(GENERATED_KEY) or {}
    if info.get("key") != key:
        return None
    found = current or example
    return GeneratedCases(
        list(found.inputs.get(GENERATED_KEY) or []),
        list(info.get("dropped") or []),
        str(info.get("source")),
        example=found,
        reused=True,
    )


def _store(example: Example, store: Store | None, key: str, result: GeneratedCases) -> None:
    target = _store_of(example, store)
    current = target.get_example(example.id) if target is not None else None
    base = current or example
    info: dict[str, Any] = {
        "key": key,
        "source": result.source,
        "count": len(result.cases),
        "dropped": result.dropped,
    }
    updated = base.model_copy(
        update={
            "inputs": {**base.inputs, GENERATED_KEY: result.cases},
            "metadata": {**(base.metadata or {}), GENERATED_KEY: info},
        }
    )
    if target is not None and current is not None:
        result.version = target.update_example(updated)
    result.example = updated
