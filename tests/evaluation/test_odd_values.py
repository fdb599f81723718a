"""What a target or an evaluator can produce never fails an experiment: a metric named
with a lone surrogate, an exception whose message cannot be read, a value that refers to
itself or nests too deep. Every row is stored, and the experiment reads back."""

from __future__ import annotations

from typing import Any

import pytest

import assay
from assay.store import _json

ROWS = 6


class Unreadable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message for you")


def _run(client: assay.Client, target: Any, evaluators: list[Any]) -> assay.ExperimentResults:
    return assay.evaluate(
        target,
        data=[{"inputs": {"i": i}, "outputs": {"i": i}} for i in range(ROWS)],
        evaluators=evaluators,
        client=client,
        progress=False,
    )


def _stored_rows(client: assay.Client, results: assay.ExperimentResults) -> list[Any]:
    again = client.read_experiment(results.experiment_name)
    return list(again)


def test_a_metric_named_with_a_lone_surrogate_is_stored_with_its_figures(client: assay.Client) -> None:
    def reversed_name(outputs: dict[str, Any]) -> dict[str, Any]:
        return {"key": "k\udc80", "score": 1}

    results = _run(client, lambda inputs: {"x": inputs["i"]}, [reversed_name])
    assert len(_stored_rows(client, results)) == ROWS
    again = client.read_experiment(results.experiment_name)
    assert again.aggregate["k\\udc80"].n == ROWS  # stored escaped, as every text column


def test_an_exception_whose_message_cannot_be_read_is_a_failed_row(client: assay.Client) -> None:
    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        if inputs["i"] % 2:
            raise Unreadable
        return {"x": inputs["i"]}

    def judge(outputs: dict[str, Any]) -> float:
        raise Unreadable

    results = _run(client, target, [assay.metric(needs_outputs=False)(judge)])
    rows = _stored_rows(client, results)
    assert len(rows) == ROWS
    failed = [row["run"].error for row in rows if row["run"].error]
    assert failed == ["Unreadable: <the exception's message could not be read>"] * (ROWS // 2)
    errors = {row["evaluation_results"]["results"][0].error for row in rows}
    assert errors == {"Unreadable: <the exception's message could not be read>"}


def _cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {"name": "loop", "items": [1, 2]}
    value["self"] = value
    value["items"].append(value["items"])
    return value


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("odd", ["cyclic", "deep"])
def test_a_value_that_refers_to_itself_or_nests_too_deep_keeps_the_row_readable(
    client: assay.Client, odd: str
) -> None:
    def value() -> Any:
        return _cyclic() if odd == "cyclic" else _deep(2000)

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"fine": inputs["i"], "odd": value()}

    def judge(outputs: dict[str, Any]) -> dict[str, Any]:
        return {"score": 1, "metadata": {"odd": value(), "fine": True}}

    results = _run(client, target, [judge])
    rows = _stored_rows(client, results)
    assert len(rows) == ROWS
    for position, row in enumerate(rows):
        outputs = row["run"].outputs
        assert outputs["fine"] == position  # the rest of the dict is kept as it was
        assert _ends_in_text(outputs["odd"])
        metadata = row["evaluation_results"]["results"][0].metadata
        assert metadata["fine"] is True and _ends_in_text(metadata["odd"])


def _ends_in_text(value: Any, levels: int = 4) -> bool:
    """Its first levels keep their shape, and what is below them is shown as text."""
    if isinstance(value, str):
        return bool(value)
    items = list(value.values()) if isinstance(value, dict) else value
    return levels > 0 and any(_ends_in_text(item, levels - 1) for item in items if not isinstance(item, int))


@pytest.mark.parametrize("levels", [150, 260, 900])
def test_how_deep_a_value_is_stored_whole_does_not_depend_on_the_caller(levels: int) -> None:
    """The same value encodes the same from a shallow stack and from a deep one (the run's
    row threads and the SQLite writer process call from different depths)."""

    def nested(depth: int) -> str | None:
        return nested(depth - 1) if depth else _json.dumps({"v": _deep(levels)})

    shallow = _json.dumps({"v": _deep(levels)})
    assert nested(300) == shallow
    stored = _json.loads(shallow)["v"]
    assert (stored == _deep(levels)) == (levels < _json.MAX_DEPTH)  # whole, or its first levels


class Ratio(float):
    pass


def test_a_float_subclass_is_stored_as_the_float_it_is() -> None:
    assert _json.loads(_json.dumps({"v": Ratio(2.5), "w": [Ratio(-0.0)]})) == {"v": 2.5, "w": [-0.0]}
    assert _json.dumps({"v": Ratio(2.5)}) == '{"v":2.5}'


def test_a_traced_call_returning_a_value_that_holds_itself_keeps_the_row_readable(
    client: assay.Client,
) -> None:
    @assay.traceable
    def child(x: int) -> dict[str, Any]:
        return _cyclic()

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        child(inputs["i"])
        return {"mine": inputs["i"]}

    results = _run(client, target, [])
    rows = _stored_rows(client, results)
    assert [row["run"].outputs["mine"] for row in rows] == list(range(ROWS))
    (traced,) = rows[0]["run"].child_runs
    assert traced.name == "child" and traced.outputs["name"] == "loop" and _ends_in_text(traced.outputs)
