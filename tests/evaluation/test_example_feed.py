"""The examples a run is fed: each page's examples made at once (``codec.examples_of_fields``)
are those ``example_of_fields`` makes one by one; and they are the run's own copies, so a
target or evaluator that changes them changes neither the caller's data nor the stored
examples."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from assay import Client, evaluate
from assay.store import _codec
from assay.store._json import dumps

DATASET = uuid.uuid4()
AT = ("2026-12-06T22:00:00.123456+00:00", "2026-12-06T22:00:01+00:00", "2026-12-05T01:02:03.000001+00:00")


def _fields(index: int, outputs: Any, metadata: Any, created_at: str) -> tuple[Any, ...]:
    return (str(uuid.uuid4()), dumps({"x": index}), outputs, metadata, created_at, index)


# An equivalence test: a page mixing instants (runs of one, then a change), stored outputs
# and metadata as NULL, as JSON null, as objects, and values that need the store's tags.
PAGE = [
    _fields(0, None, None, AT[0]),
    _fields(1, "null", "null", AT[0]),
    _fields(2, dumps({"y": float("nan"), "big": 2**70}), dumps({"m": (1, 2)}), AT[0]),
    _fields(3, dumps({"y": 3}), None, AT[1]),
    _fields(4, dumps({}), dumps({}), AT[1]),
    _fields(5, dumps({"y": 5}), None, AT[2]),
    _fields(6, dumps({"y": 6}), None, AT[0]),
]


def _state(example: Any) -> Any:
    return (dict(example.__dict__), example.model_fields_set, example.__pydantic_extra__)


def test_a_page_of_examples_is_the_examples_made_one_by_one() -> None:
    made = list(_codec.examples_of_fields(PAGE, DATASET))
    one_by_one = [_codec.example_of_fields(fields, DATASET) for fields in PAGE]
    assert [_state(e) for e in made] == [_state(e) for e in one_by_one]
    assert [e.created_at.isoformat() for e in made] == [f[4] for f in PAGE]
    assert made[0].inputs is not made[1].inputs  # each example its own values


def _mutating_target(inputs: dict[str, Any]) -> dict[str, Any]:
    answer = inputs["x"] * 2
    inputs["x"] = -1  # a target that changes what it was given
    inputs.setdefault("added", []).append(1)
    return {"answer": answer}


def _mutating_evaluator(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    matched = outputs["answer"] == reference_outputs["answer"]
    reference_outputs["answer"] = "changed"
    return matched


def test_a_target_that_changes_its_inputs_changes_neither_the_data_nor_the_stored_examples(
    client: Client,
) -> None:
    data = [{"inputs": {"x": i, "nested": {"k": [i]}}, "outputs": {"answer": 2 * i}} for i in range(40)]
    given = copy.deepcopy(data)
    first = evaluate(
        _mutating_target, data=data, evaluators=[_mutating_evaluator], client=client, progress=False
    )
    assert data == given  # the caller's dicts are not the run's
    rows = list(first)
    assert all(row["evaluation_results"]["results"][0].score is True for row in rows)
    stored = sorted(
        client.list_examples(dataset_id=first.get_dataset_id()), key=lambda e: e.inputs["nested"]["k"]
    )
    assert [{"inputs": e.inputs, "outputs": e.outputs} for e in stored] == given
    # the same data again: the same dataset, fed as stored, not as the first run left it
    second = evaluate(
        _mutating_target, data=data, evaluators=[_mutating_evaluator], client=client, progress=False
    )
    assert second.get_dataset_id() == first.get_dataset_id()
    assert all(row["evaluation_results"]["results"][0].score is True for row in second)
