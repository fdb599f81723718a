"""JSON evaluators: is the output valid JSON (and valid against a JSON Schema)? Does it equal
the reference as a structure?"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from assay.errors import EvaluatorInputError, InvalidJsonError, require_extra
from assay.evaluators._fields import ReferenceEvaluator, pick
from assay.evaluators.text._json_diff import json_differences, json_path
from assay.schemas import EvaluationResult, Example, Run

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
InvalidJson = InvalidJsonError

__all__ = [
    "InvalidJsonError",
    "JsonEqualityEvaluator",
    "JsonValidityEvaluator",
    "MAX_REPORTED_ERRORS",
    "parse_json",
]


_CODE_FENCE = re.compile(r"^\s*```[\w-]*[ \t]*\n(.*?)\n?```\s*$", re.DOTALL)
MAX_REPORTED_ERRORS = 20


def parse_json(value: Any, strip_code_fence: bool = True) -> Any:
    """The JSON value of an output: a string is parsed, anything else is taken as parsed
    (``None`` is no output, not JSON ``null``)."""
    if value is None:
        raise InvalidJsonError("not valid JSON: the value is None (no output)")
    if not isinstance(value, str):
        _check_serializable(value)
        return value
    text = value
    fenced = _CODE_FENCE.match(text) if strip_code_fence else None
    if fenced is not None:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidJsonError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", exc.lineno, exc.colno
        ) from exc


def _check_serializable(value: Any) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidJsonError(f"not a JSON value: {exc}") from exc


class JsonValidityEvaluator(ReferenceEvaluator):
    """1.0 when the output parses as JSON (and validates against ``schema``), else 0.0.

    A string output is parsed (a Markdown code fence around it is removed unless
    ``strip_code_fence=False``); a dict, list or number is already JSON. With ``schema``
    (or a per-example schema under ``example.outputs[schema_key]``), the value must also
    validate; ``metadata["errors"]`` then lists each failure as ``{"path": "$.items[0].price",
    "message": ...}`` and ``metadata["failing_paths"]`` the paths alone.
    """

    default_name = "json_validity"

    def __init__(
        self,
        schema: Mapping[str, Any] | None = None,
        *,
        schema_key: str | None = None,
        strip_code_fence: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.schema_key = schema_key
        self.strip_code_fence = strip_code_fence
        self._validator = None if schema is None else _validator(schema, "schema=")

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        validator = self._validator or self._example_validator(example)
        try:
            value = parse_json(self.prediction(run), self.strip_code_fence)
        except InvalidJsonError as exc:
            return self.result(
                0.0,
                comment=str(exc),
                metadata={
                    "valid_json": False,
                    "line": exc.line,
                    "column": exc.column,
                },
            )
        if validator is None:
            return self.result(1.0, metadata={"valid_json": True})
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        reported = [
            {"path": json_path(error.absolute_path), "message": error.message}
            for error in errors[:MAX_REPORTED_ERRORS]
        ]
        metadata = {
            "valid_json": True,
            "schema_valid": not errors,
            "error_count": len(errors),
            "errors": reported,
            "failing_paths": sorted({e["path"] for e in reported}),
        }
        comment = None if not errors else "; ".join(f"{e['path']}: {e['message']}" for e in reported[:5])
        return self.result(0.0 if errors else 1.0, comment=comment, metadata=metadata)

    def _example_validator(self, example: Example | None) -> Any:
        if self.schema_key is None:
            return None
        where = "example.outputs" + (f" of example {example.id}" if example else "")
        schema = pick(example.outputs if example else None, self.schema_key, where=where, option="schema_key")
        if isinstance(schema, str):
            schema = json.loads(schema)
        return _validator(schema, f"the schema in {where}[{self.schema_key!r}]")


def _validator(schema: Any, what: str) -> Any:
    require_extra("jsonschema", "text", feature="JSON schema validation")
    from jsonschema import exceptions, validators

    if not isinstance(schema, (Mapping, bool)):
        raise EvaluatorInputError(f"{what} must be a JSON Schema object, got {type(schema).__name__}")
    document: Any = schema
    cls = validators.validator_for(document)
    try:
        cls.check_schema(document)
    except exceptions.SchemaError as exc:
        raise EvaluatorInputError(f"{what} is not a valid JSON Schema: {exc.message}") from exc
    return cls(document, format_checker=cls.FORMAT_CHECKER)


class JsonEqualityEvaluator(ReferenceEvaluator):
    """1.0 when output and reference are equal as JSON structures, else 0.0.

    Strings are parsed first, so ``'{"a": 1}'`` equals ``{"a": 1}``. Key order never
    matters; list order does unless ``ignore_list_order=True``. ``ignore_keys`` names
    object keys skipped at any depth (``"id"``) or at one path (``"$.meta.created_at"``,
    ``"$.items[*].id"``).
    ``1`` equals ``1.0``, but ``true`` does not equal ``1``. ``metadata["differences"]``
    lists where the structures differ.
    """

    default_name = "json_equality"

    def __init__(
        self,
        *,
        ignore_keys: Iterable[str] = (),
        ignore_list_order: bool = False,
        strip_code_fence: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if isinstance(ignore_keys, str):
            ignore_keys = (ignore_keys,)
        self.ignore_keys = frozenset(ignore_keys)
        self.ignore_list_order = ignore_list_order
        self.strip_code_fence = strip_code_fence

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        prediction, reference = self.prediction(run), self.reference(example)
        try:
            expected = parse_json(reference, self.strip_code_fence)
        except InvalidJsonError as exc:
            raise EvaluatorInputError(f"the reference output is {exc}") from exc
        try:
            actual = parse_json(prediction, self.strip_code_fence)
        except InvalidJsonError as exc:
            return self.result(0.0, comment=f"the output is {exc}", metadata={"valid_json": False})
        differences = json_differences(
            actual,
            expected,
            ignore_keys=self.ignore_keys,
            ignore_list_order=self.ignore_list_order,
            limit=MAX_REPORTED_ERRORS,
        )
        comment = "; ".join(differences[:5]) or None
        return self.result(
            0.0 if differences else 1.0,
            comment=comment,
            metadata={"valid_json": True, "differences": differences},
        )
