"""The per-row path builds its records without validating them again (``schemas.trusted``):
what user code sees must be the same records validation would have made."""

from __future__ import annotations

import math
import sqlite3
import uuid
from typing import Any

import pytest
from pydantic import BaseModel

from assay import Client, evaluate
from assay.schemas import EvaluationResult, Example, Run, trusted, utcnow
from assay.store import _json

NOW = utcnow()
ID = uuid.uuid4()


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (EvaluationResult, {"key": "k"}),
        (EvaluationResult, {"key": "k", "score": True, "value": None, "source_run_id": ID}),
        (EvaluationResult, {"key": "k", "score": 3, "comment": "c", "metadata": {"a": [1]}}),
        (Run, {"id": ID, "name": "t", "inputs": {"x": 1}, "outputs": {"y": 2}, "start_time": NOW}),
        (Run, {"name": "t", "end_time": NOW, "extra": {"repetition": 0}, "tags": ["a"]}),
        (Example, {"id": ID, "dataset_id": ID, "inputs": {"x": 1}, "outputs": None, "created_at": NOW}),
        (Example, {"inputs": {"x": 1}, "metadata": {"m": 1}}),
    ],
)
def test_a_trusted_record_is_the_record_validation_makes(model: type[BaseModel], fields: dict) -> None:
    made, validated = trusted(model, dict(fields)), model(**fields)
    assert made.model_fields_set == validated.model_fields_set == set(fields)
    for generated in ("id", "created_at", "start_time"):  # default factories: fresh values
        if generated in model.model_fields and generated not in fields:
            assert type(getattr(made, generated)) is type(getattr(validated, generated))
            made.__dict__[generated] = getattr(validated, generated)
    assert type(made) is model
    assert made == validated
    assert repr(made) == repr(validated)
    assert made.model_dump_json() == validated.model_dump_json()
    assert made.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert made.model_copy(update={"name": "x"} if model is Run else {}) is not made


def test_trusted_records_do_not_share_their_default_containers() -> None:
    first, second = trusted(Run, {"name": "a"}), trusted(Run, {"name": "b"})
    first.events.append({"e": 1})
    first.extra["k"] = 1
    assert second.events == [] and second.extra == {} and first.id != second.id
    a, b = trusted(EvaluationResult, {"key": "a"}), trusted(EvaluationResult, {"key": "b"})
    a.metadata["x"] = 1
    assert b.metadata == {} and EvaluationResult(key="c").metadata == {}


def test_a_user_evaluator_gets_a_real_run_and_example(client: Client) -> None:
    seen: list[tuple[Any, Any]] = []

    def looks(run, example):
        seen.append((run, example))
        return run.outputs["y"] == example.outputs["y"]

    data = [{"inputs": {"x": i}, "outputs": {"y": i}, "metadata": {"i": i}} for i in range(3)]
    dataset = client.create_dataset("hot")
    client.create_examples(examples=data, dataset_id=dataset.id)
    results = evaluate(lambda inputs: {"y": inputs["x"]}, data="hot", evaluators=[looks], client=client)
    assert [row["evaluation_results"]["results"][0].score for row in results] == [True] * 3
    stored = {e.id: e for e in client.list_examples(dataset_id=dataset.id)}
    for run, example in seen:
        assert type(run) is Run and type(example) is Example
        # Validating what the evaluator got gives it back unchanged: every field is of its type.
        assert Run.model_validate(run.model_dump()) == run
        assert Example.model_validate(example.model_dump()) == example
        assert isinstance(run.id, uuid.UUID) and run.trace_id == run.id
        assert run.reference_example_id == example.id and run.session_id == results.experiment_id
        assert run.end_time is not None and run.end_time >= run.start_time and run.latency_ms >= 0
        assert run.extra["repetition"] == 0 and run.inputs == example.inputs
        assert {"id", "outputs", "start_time", "end_time", "inputs"} <= run.model_fields_set
        assert example.dataset_id == dataset.id and example.metadata == {"i": example.inputs["x"]}
        assert example == stored[example.id]
    assert len({run.id for run, _ in seen}) == 3


def test_a_plain_score_is_a_real_evaluation_result(client: Client) -> None:
    def half(outputs) -> float:
        return 0.5

    def flag(outputs) -> bool:
        return True

    results = evaluate(
        lambda inputs: inputs, data=[{"inputs": {"x": 1}}], evaluators=[half, flag], client=client
    )
    [row] = list(results)
    got = row["evaluation_results"]["results"]
    for result, expected in zip(
        got, [EvaluationResult(key="half", score=0.5), EvaluationResult(key="flag", score=True)]
    ):
        assert type(result) is EvaluationResult
        assert result.source_run_id == row["run"].id
        result.source_run_id = None
        assert result == expected and type(result.score) is type(expected.score)
    assert EvaluationResult.model_validate(got[0].model_dump()) == got[0]


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1, "b": "s", "c": None, "d": True, "e": 0.5},
        {"a": {"deep": (1, 2)}, "b": 1},
        {"a": 2**70, "b": [1, {"c": math.inf}]},
        {"x": 1, 2: "non-str key"},
        {"$tuple": [1]},
        {"a": [1, 2], "b": {"c": {"d": -math.inf}}, "z": b"bytes"},
    ],
)
def test_json_tagging_reads_back_exactly(value: dict) -> None:
    assert _json.loads(_json.dumps(value)) == value


def test_json_tagging_copies_nothing_when_nothing_needs_a_tag() -> None:
    plain = {"a": 1, "b": "s", "c": [1, {"d": 2.5}], "e": None}
    assert _json.tag(plain) is plain
    nested = {"a": 1, "b": (1,)}
    tagged = _json.tag(nested)
    assert tagged == {"a": 1, "b": {"$tuple": [1]}} and nested == {"a": 1, "b": (1,)}
    assert list(tagged) == ["a", "b"]


def test_a_damaged_stored_example_is_a_clear_error(tmp_path) -> None:
    db = tmp_path / "store.db"
    client = Client(str(db))
    dataset = client.create_dataset("d")
    client.create_examples(inputs=[{"x": 1}], dataset_id=dataset.id)
    client.close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE examples SET inputs = '[1, 2]'")
    client = Client(str(db))
    with pytest.raises(ValueError, match="not a JSON object"):
        list(client.store.iter_examples(dataset.id))
    client.close()
