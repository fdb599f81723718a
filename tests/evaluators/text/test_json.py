"""JsonValidityEvaluator (with JSON Schema) and JsonEqualityEvaluator."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluators.text.json import JsonEqualityEvaluator, JsonValidityEvaluator

ORDER_SCHEMA = {
    "type": "object",
    "required": ["customer", "items"],
    "properties": {
        "customer": {"type": "string"},
        "email": {"type": "string", "format": "email"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["sku", "price"],
                "properties": {"sku": {"type": "string"}, "price": {"type": "number", "minimum": 0}},
            },
        },
    },
}


@pytest.mark.parametrize(
    ("output", "score"),
    [
        ('{"a": 1}', 1.0),
        ("[1, 2, 3]", 1.0),
        ('"text"', 1.0),
        ('  {"a": 1}\n', 1.0),
        ('```json\n{"a": 1}\n```', 1.0),  # a Markdown fence is removed
        ({"a": 1}, 1.0),  # already parsed
        ([1], 1.0),
        ("{'a': 1}", 0.0),  # Python, not JSON
        ('{"a": 1,}', 0.0),
        ("", 0.0),
        (None, 0.0),
        ("NaN", 1.0),  # Python's json accepts it; the schema can forbid it
    ],
)
def test_validity(output: Any, score: float, run_of: Any) -> None:
    result = JsonValidityEvaluator().evaluate(run_of(output), None)
    assert result.key == "json_validity"
    assert result.score == score
    assert result.error is None


def test_invalid_json_reports_where(run_of: Any) -> None:
    result = JsonValidityEvaluator().evaluate(run_of('{\n  "a": 1\n  "b": 2\n}'), None)
    assert result.score == 0.0
    assert result.metadata == {"valid_json": False, "line": 3, "column": 3}
    assert "Expecting ',' delimiter at line 3 column 3" in result.comment


def test_code_fence_can_be_required_absent(run_of: Any) -> None:
    fenced = run_of('```json\n{"a": 1}\n```')
    assert JsonValidityEvaluator(strip_code_fence=False).evaluate(fenced, None).score == 0.0


def test_schema_failures_list_their_paths(run_of: Any) -> None:
    output = {
        "customer": 7,
        "email": "not-an-email",
        "items": [{"sku": "A", "price": 3}, {"sku": "B", "price": -1}, {"price": "x"}],
    }
    result = JsonValidityEvaluator(ORDER_SCHEMA).evaluate(run_of(output), None)
    assert result.score == 0.0
    assert result.metadata["valid_json"] is True
    assert result.metadata["schema_valid"] is False
    assert result.metadata["failing_paths"] == [
        "$.customer",
        "$.email",
        "$.items[1].price",
        "$.items[2]",
        "$.items[2].price",
    ]
    messages = {e["path"]: e["message"] for e in result.metadata["errors"]}
    assert "is not of type 'string'" in messages["$.customer"]
    assert "'sku' is a required property" in messages["$.items[2]"]
    assert "is not a 'email'" in messages["$.email"]
    assert result.metadata["error_count"] == 5
    assert "$.customer" in result.comment


def test_schema_pass(run_of: Any) -> None:
    output = '{"customer": "Ada", "items": [{"sku": "A", "price": 2.5}]}'
    result = JsonValidityEvaluator(ORDER_SCHEMA).evaluate(run_of(output), None)
    assert result.score == 1.0
    assert result.metadata["failing_paths"] == []


def test_per_example_schema(run_of: Any, example_of: Any) -> None:
    evaluator = JsonValidityEvaluator(schema_key="schema")
    example = example_of(schema={"type": "array", "maxItems": 2})
    assert evaluator.evaluate(run_of("[1, 2]"), example).score == 1.0
    assert evaluator.evaluate(run_of("[1, 2, 3]"), example).score == 0.0
    missing = evaluator.evaluate(run_of("[1]"), example_of(other={}))
    assert missing.score is None and "no key 'schema'" in missing.error


def test_an_invalid_schema_fails_early(run_of: Any, example_of: Any) -> None:
    with pytest.raises(ValueError, match="schema= is not a valid JSON Schema"):
        JsonValidityEvaluator({"type": "no-such-type"})
    result = JsonValidityEvaluator(schema_key="schema").evaluate(run_of("1"), example_of(schema={"type": 5}))
    assert result.score is None and "is not a valid JSON Schema" in result.error


@pytest.mark.parametrize(
    ("output", "reference", "score"),
    [
        ('{"b": 2, "a": 1}', {"a": 1, "b": 2}, 1.0),  # key order and text vs parsed
        ({"a": 1.0}, '{"a": 1}', 1.0),  # one JSON number type
        ({"a": True}, {"a": 1}, 0.0),
        ({"a": [1, 2]}, {"a": [2, 1]}, 0.0),
        ({"a": None}, {}, 0.0),
        ("null", None, 0.0),  # None as a reference is no reference output
        ("[]", [], 1.0),
    ],
)
def test_equality(output: Any, reference: Any, score: float, run_of: Any, example_of: Any) -> None:
    result = JsonEqualityEvaluator().evaluate(run_of(output), example_of(reference))
    if reference is None:
        assert result.score is None and "None" in result.error
    else:
        assert result.key == "json_equality"
        assert result.score == score


def test_equality_reports_differences_by_path(run_of: Any, example_of: Any) -> None:
    output = {"user": {"name": "Ada", "age": 37}, "tags": ["x"], "extra": 1}
    reference = {"user": {"name": "Ada", "age": 36, "email": "a@b.c"}, "tags": ["x", "y"]}
    result = JsonEqualityEvaluator().evaluate(run_of(output), example_of(reference))
    assert result.score == 0.0
    assert result.metadata["differences"] == [
        "$.user.age: expected 36, got 37",
        '$.user.email: missing (expected "a@b.c")',
        "$.tags: expected 2 items, got 1",
        "$.extra: unexpected key (got 1)",
    ]


def test_ignored_keys_at_any_depth_or_by_path(run_of: Any, example_of: Any) -> None:
    output = {"id": 1, "meta": {"id": 9, "at": "t1"}, "items": [{"ts": 1, "v": 1}, {"ts": 2, "v": 2}]}
    reference = {"id": 2, "meta": {"id": 8, "at": "t2"}, "items": [{"ts": 5, "v": 1}, {"ts": 6, "v": 2}]}
    evaluator = JsonEqualityEvaluator(ignore_keys=["id", "$.meta.at", "$.items[*].ts"])
    assert evaluator.evaluate(run_of(output), example_of(reference)).score == 1.0
    partial = JsonEqualityEvaluator(ignore_keys="id").evaluate(run_of(output), example_of(reference))
    assert partial.score == 0.0
    assert '$.meta.at: expected "t2", got "t1"' in partial.metadata["differences"]


def test_ignore_list_order(run_of: Any, example_of: Any) -> None:
    evaluator = JsonEqualityEvaluator(ignore_list_order=True)
    same = evaluator.evaluate(run_of([3, {"k": [2, 1]}, 1]), example_of([1, 3, {"k": [1, 2]}]))
    assert same.score == 1.0
    different = evaluator.evaluate(run_of([1, 1, 2]), example_of([1, 2, 2]))
    assert different.score == 0.0
    assert different.metadata["differences"] == [
        "$: lists differ ignoring order (1 expected item(s) missing, 1 unexpected)"
    ]


def test_invalid_output_scores_zero_but_invalid_reference_errors(run_of: Any, example_of: Any) -> None:
    bad_output = JsonEqualityEvaluator().evaluate(run_of("{oops"), example_of({"a": 1}))
    assert bad_output.score == 0.0 and bad_output.metadata == {"valid_json": False}
    bad_reference = JsonEqualityEvaluator().evaluate(run_of("{}"), example_of("{oops"))
    assert bad_reference.score is None and "the reference output is not valid JSON" in bad_reference.error
