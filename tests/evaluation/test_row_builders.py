"""Records and calls built once per evaluator or per model, then reused for every row
(``schemas.trusted_builder``, the evaluators' prepared calls): each must give exactly
what the general path gives."""

from __future__ import annotations

import copy
import itertools
import pickle
import uuid
from typing import Any

import pytest
from pydantic import BaseModel

from assay.evaluation._binding import ROW_PARAMETERS, bind_row_evaluator, row_arguments
from assay.evaluation._returns import normalize_returned
from assay.schemas import EvaluationResult, Example, Run, trusted, trusted_builder, utcnow

NOW = utcnow()
ID = uuid.uuid4()

CASES: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (EvaluationResult, {"key": "k", "score": True, "value": None, "source_run_id": ID}),
    (EvaluationResult, {"key": "k", "score": None, "value": "text", "source_run_id": None}),
    (EvaluationResult, {"metadata": {"a": 1}, "key": "k"}),  # a field with a factory, given
    (Run, {"id": ID, "name": "t", "inputs": {"x": 1}, "outputs": {"y": 2}, "start_time": NOW}),
    (Run, {"name": "t", "end_time": NOW, "extra": {"repetition": 0}, "tags": ["a"], "odd": 1}),
    (Example, {"id": ID, "dataset_id": ID, "inputs": {"x": 1}, "outputs": None, "created_at": NOW}),
    (Example, {"inputs": {"x": 1}, "unknown_field": [1]}),  # an extra field (extra="allow")
]


def _state(record: BaseModel, fresh: tuple[str, ...] = ("id", "start_time", "created_at")) -> Any:
    """Everything a record holds, with generated defaults (fresh per record) set apart."""
    values = {k: v for k, v in record.__dict__.items() if k not in fresh or k in record.model_fields_set}
    return (
        type(record),
        list(record.__dict__),  # the field order: repr and dumps follow it
        values,
        record.model_fields_set,
        record.__pydantic_extra__,
        record.__pydantic_private__,
    )


@pytest.mark.parametrize(("model", "fields"), CASES)
def test_a_built_record_is_the_trusted_record(model: type[BaseModel], fields: dict[str, Any]) -> None:
    build = trusted_builder(model, tuple(fields))
    made, expected = build(*fields.values()), trusted(model, dict(fields))
    assert _state(made) == _state(expected)
    assert repr(made) == repr(expected) or "id" not in fields  # a generated id differs
    assert made.model_dump_json(exclude={"id", "start_time", "created_at"}) == expected.model_dump_json(
        exclude={"id", "start_time", "created_at"}
    )


def test_built_records_share_no_containers_and_get_fresh_defaults() -> None:
    build = trusted_builder(Run, ("name",))
    first, second = build("a"), build("b")
    first.events.append({"e": 1})
    first.extra["k"] = 1
    first.model_fields_set.add("outputs")
    assert second.events == [] and second.extra == {} and second.model_fields_set == {"name"}
    assert first.id != second.id and (first.name, second.name) == ("a", "b")
    build_result = trusted_builder(EvaluationResult, ("key",))
    a, b = build_result("a"), build_result("b")
    a.metadata["x"] = 1
    assert b.metadata == {} and b.evaluator_info == {}


@pytest.mark.parametrize("raw", [True, False, 0, 3, 0.5, -0.0, 2**70])
def test_a_plain_score_is_the_result_validation_makes(raw: Any) -> None:
    [made] = normalize_returned(raw, "metric", ID)
    expected = EvaluationResult(key="metric", score=raw, value=None, source_run_id=ID)
    assert made == expected and type(made.score) is type(raw)
    assert made.model_fields_set == expected.model_fields_set
    assert made.model_dump_json() == expected.model_dump_json()


def _every_parameter_set() -> list[tuple[str, ...]]:
    names = [n for n in ROW_PARAMETERS if n != "attachments"]
    return [c for size in (1, 2, 3, len(names)) for c in itertools.combinations(names, size)]


RUN = Run(id=ID, name="t", inputs={"x": 1}, outputs={"y": 2}, start_time=NOW)
EXAMPLE = Example(inputs={"x": 1}, outputs={"y": 2}, metadata={"m": 1}, attachments={"a": {"b": 1}})
BARE = Example(inputs={"x": 1})  # no outputs, metadata or attachments: each is passed as {}


@pytest.mark.parametrize("names", _every_parameter_set(), ids="-".join)
@pytest.mark.parametrize("example", [EXAMPLE, BARE], ids=["full", "bare"])
def test_an_evaluator_gets_each_argument_it_names(names: tuple[str, ...], example: Example) -> None:
    seen: list[dict[str, Any]] = []
    code = f"def ev({', '.join(names)}):\n    seen.append(dict(locals()))\n    return True\n"
    scope: dict[str, Any] = {"seen": seen}
    exec(code, scope)  # noqa: S102 - a signature per parameter set
    [result] = bind_row_evaluator(scope["ev"]).call_sync(RUN, example)
    assert result.score is True and result.error is None
    every = row_arguments(RUN, example)
    assert seen == [{name: every[name] for name in names}]
    for name in names:
        assert seen[0][name] is every[name] or every[name] == {}


@pytest.mark.parametrize("example", [EXAMPLE, BARE], ids=["full", "bare"])
def test_keyword_catch_all_and_legacy_evaluators_get_what_they_got(example: Example) -> None:
    got: dict[str, Any] = {}

    def everything(**kwargs: Any) -> int:
        got["kwargs"] = kwargs
        return 1

    def legacy(r: Run, e: Example, *, threshold: float = 0.5) -> dict[str, Any]:
        got["legacy"] = (r, e, threshold)
        return {"key": "legacy", "score": 0.25}

    def outputs_and_attachments(outputs: dict[str, Any], attachments: dict[str, Any]) -> bool:
        got["attachments"] = (outputs, attachments)
        return False

    assert bind_row_evaluator(everything).call_sync(RUN, example)[0].score == 1
    assert got["kwargs"] == row_arguments(RUN, example)
    [legacy_result] = bind_row_evaluator(legacy).call_sync(RUN, example)
    assert got["legacy"] == (RUN, example, 0.5) and legacy_result.score == 0.25
    assert bind_row_evaluator(outputs_and_attachments).call_sync(RUN, example)[0].score is False
    assert got["attachments"] == (RUN.outputs, example.attachments or {})


# The builders the row path uses, each with what validation makes of the same values.
ROW_BUILDS: list[tuple[type[BaseModel], tuple[str, ...], tuple[Any, ...]]] = [
    (EvaluationResult, ("key", "score", "value", "source_run_id"), ("k", 0.5, None, ID)),
    (
        Example,
        ("id", "dataset_id", "inputs", "outputs", "metadata", "created_at"),
        (ID, ID, {"x": 1}, None, {}, NOW),
    ),
    (
        Run,
        ("id", "name", "run_type", "inputs", "outputs", "error", "start_time", "end_time", "child_runs"),
        (ID, "t", "chain", {"x": 1}, {"y": 2}, None, NOW, NOW, []),
    ),
]


@pytest.mark.parametrize(("model", "names", "values"), ROW_BUILDS, ids=lambda v: getattr(v, "__name__", ""))
def test_a_built_record_is_the_validated_record(
    model: type[BaseModel], names: tuple[str, ...], values: tuple[Any, ...]
) -> None:
    """The oracle is pydantic's own validation: the same fields, order, defaults, fields set,
    extras and private state, and records that compare, print and dump alike."""
    made, validated = trusted_builder(model, names)(*values), model(**dict(zip(names, values)))
    fresh = tuple(n for n in ("id", "start_time", "created_at") if n not in names)
    assert _state(made, fresh) == _state(validated, fresh)
    assert made.model_dump(exclude=set(fresh)) == validated.model_dump(exclude=set(fresh))
    if not fresh:
        assert made == validated and repr(made) == repr(validated)


def test_a_builder_refuses_a_field_named_twice() -> None:
    with pytest.raises(ValueError, match="named twice"):
        trusted_builder(EvaluationResult, ("key", "score", "key"))


# Records one builder makes share one fields set (a set per record was a tracked object
# the collector walked, ~15 strings hashed per record). What pydantic and users see must be
# as if each record had its own.
SHARING = [
    (Run, ("name",), ("t",), "outputs", {"y": 1}),
    (Example, ("inputs",), ({"x": 1},), "outputs", {"y": 1}),
    (EvaluationResult, ("key",), ("k",), "score", 0.5),
]


@pytest.mark.parametrize(
    ("model", "names", "values", "field", "value"), SHARING, ids=lambda v: getattr(v, "__name__", "")
)
def test_records_share_one_fields_set_yet_each_reads_and_changes_its_own(
    model: type[BaseModel], names: tuple[str, ...], values: tuple[Any, ...], field: str, value: Any
) -> None:
    build = trusted_builder(model, names)
    first, second, third = build(*values), build(*values), build(*values)
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__  # one object
    validated = model(**dict(zip(names, values)))
    assert first.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    setattr(first, field, value)  # pydantic adds the field to the record's set
    assert first.model_fields_set == {*names, field} and second.model_fields_set == set(names)
    assert first.model_dump(exclude_unset=True)[field] == value
    third.model_fields_set.add(field)  # a user's change of what model_fields_set gives
    assert third.model_fields_set == {*names, field} and build(*values).model_fields_set == set(names)
    copied = second.model_copy(update={field: value})
    assert copied.model_fields_set == {*names, field} and second.model_fields_set == set(names)
    deep = copy.deepcopy(build(*values))
    deep.model_fields_set.add(field)
    assert build(*values).model_fields_set == set(names)
    revived = pickle.loads(pickle.dumps(build(*values)))
    assert type(revived.__pydantic_fields_set__) is set and revived.model_fields_set == set(names)


def test_a_shared_fields_set_refuses_changes_in_place() -> None:
    shared = trusted_builder(Run, ("name",))("t").__pydantic_fields_set__
    for change in (
        lambda s: s.add("x"),
        lambda s: s.discard("name"),
        lambda s: s.update({"x"}),
        lambda s: s.clear(),
        lambda s: s.__ior__({"x"}),
    ):
        with pytest.raises(TypeError, match="shared by many records"):
            change(shared)
    assert shared == {"name"} and type(shared | {"x"}) is set and type(copy.copy(shared)) is set
