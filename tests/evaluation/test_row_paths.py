"""A row computed by the all-sync path (``RowPipeline.run_sync``, rows back to back in the
row threads) is the row the general path makes (``run_async``: each part awaited on the
loop, sync parts in a pool): every field of the run, the example and every result, and the
row's tally, whatever the evaluators return or raise.
(A plain score of a key already seen is made at once: ``ExpectedKeys.results_of``.)"""

from __future__ import annotations

import asyncio
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from assay import get_current_run_tree, metric, traceable
from assay.evaluation._binding import bind_row_evaluator
from assay.evaluation._rows import PlannedRow, RowPipeline
from assay.evaluation._tally import ResultTally, RowTally, tally_row
from assay.evaluation._target import Target
from assay.schemas import EvaluationResult, Example, utcnow
from assay.store.records import ExperimentRow


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    if inputs["x"] == 3:
        raise ValueError("three is refused")
    return {"answer": inputs["x"] * 2}


def exact(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    return outputs["answer"] == reference_outputs["answer"]


def count(outputs: dict[str, Any]) -> int:
    return outputs["answer"]


@metric(direction="lower", score_range=(0, None))
def distance(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> float:
    return abs(outputs["answer"] - reference_outputs["answer"]) / 2


def ratio(inputs: dict[str, Any]) -> float:
    return float("nan") if inputs["x"] == 4 else inputs["x"] / 3  # a non-finite score is an error


def label(inputs: dict[str, Any]) -> str:
    return "even" if inputs["x"] % 2 == 0 else "odd"


def several(run: Any, example: Any) -> dict[str, Any]:
    return {
        "results": [{"key": "a", "score": 1, "comment": "c"}, {"key": "b", "value": "v", "usage": {"t": 3}}]
    }


def record(outputs: dict[str, Any]) -> EvaluationResult:
    return EvaluationResult(key="record", score=0.25, metadata={"usage": {"tokens": 2}})


def fails(outputs: dict[str, Any]) -> bool:
    raise RuntimeError("evaluator broke")


def empty(outputs: dict[str, Any]) -> list[Any]:
    return []


@metric(needs_outputs=False)
def always(inputs: dict[str, Any]) -> float:
    return 1.0


EVALUATORS = [exact, count, distance, ratio, label, several, record, fails, empty, always]
EXAMPLES = [
    Example(id=uuid.uuid4(), inputs={"x": x}, outputs={"answer": 2 * x + (x % 2)}, created_at=utcnow())
    for x in range(6)
]


def _pipeline() -> RowPipeline:
    runner = Target(target)
    runner.check_signature()
    runner.session_id = uuid.uuid4()
    return RowPipeline(runner, [bind_row_evaluator(e) for e in EVALUATORS])


def _general(pipeline: RowPipeline, planned: list[PlannedRow]) -> list[ExperimentRow]:
    async def run_all() -> list[ExperimentRow]:
        with ThreadPoolExecutor(2) as pool:
            return [await pipeline.run_async(p, pool) for p in planned]

    return asyncio.run(run_all())


def _fields(row: ExperimentRow) -> dict[str, Any]:
    """Every field of the row, with what is made fresh per run (its id and its times) set
    apart: the results must name their own row's run."""
    run = dict(row.run.__dict__)
    fresh = (run.pop("id"), run.pop("trace_id"), run.pop("start_time"), run.pop("end_time"))
    assert fresh[0] == fresh[1] and fresh[2] <= fresh[3]
    results = []
    for result in row.results:
        fields = dict(result.__dict__)
        assert fields.pop("source_run_id") == fresh[0]
        traceback = fields["metadata"].pop("traceback", None)  # the line numbers differ
        results.append((fields, sorted(result.model_fields_set), result.__pydantic_extra__, bool(traceback)))
    run["extra"] = {k: v for k, v in run["extra"].items() if k != "traceback"}
    return {
        "run": run,
        "run_set": sorted(row.run.model_fields_set),
        "example": row.example,
        "position": row.position,
        "repetition": row.repetition,
        "results": results,
    }


@pytest.mark.parametrize("repetition", [0, 2])
def test_the_sync_path_makes_the_rows_the_general_path_makes(repetition: int) -> None:
    planned = [PlannedRow(position, example, repetition) for position, example in enumerate(EXAMPLES)]
    pipeline = _pipeline()
    assert pipeline.all_sync
    fast = [pipeline.run_sync(p) for p in planned]
    general = _general(pipeline, planned)
    assert [_fields(row) for row in fast] == [_fields(row) for row in general]
    failed = fast[3]
    assert failed.run.error and [r.key for r in failed.results][-1] == "always"
    assert {r.key for r in fast[0].results} >= {
        "exact",
        "count",
        "distance",
        "ratio",
        "label",
        "a",
        "b",
        "record",
    }
    assert [r.error is not None for r in fast[4].results if r.key == "ratio"] == [True]


def test_a_rows_tally_is_the_tally_its_fields_make() -> None:
    """``tally_row`` makes its tuples without their classes' ``__new__``: they must be the
    same tuples, of the same classes, with every field read from the row."""
    pipeline = _pipeline()
    for position, example in enumerate(EXAMPLES):
        row = pipeline.run_sync(PlannedRow(position, example, 0))
        tally = tally_row(row)
        assert type(tally) is RowTally and all(type(r) is ResultTally for r in tally.results)
        expected = RowTally(
            position,
            row.run.error is not None,
            row.run.latency_ms,
            tuple(
                ResultTally(
                    r.key,
                    None if r.error is not None or r.score is None else float(r.score),
                    r.error is not None,
                    r.metadata.get("usage") or None,
                    r.evaluator_info or None,
                )
                for r in row.results
            ),
        )
        assert tally == expected
        assert tally._asdict() == expected._asdict()


# The sync target's common case (it returns, nothing edited its run tree) makes its Run at
# once in ``Target.run_sync``; anything else goes through ``Target._run``, as an async
# target always does. Each kind of target below, sync and async, must record the same Run.
def _plain(inputs: dict[str, Any]) -> Any:
    return {"answer": inputs["x"] * 2}


def _not_a_dict(inputs: dict[str, Any]) -> Any:
    return inputs["x"] * 2


def _int_keys(inputs: dict[str, Any]) -> Any:
    return {1: "one", "two": 2}


def _raises(inputs: dict[str, Any]) -> Any:
    raise ValueError("refused")


@traceable(name="child")
def _child(x: int) -> int:
    return x + 1


def _traces_a_child(inputs: dict[str, Any]) -> Any:
    return {"answer": _child(inputs["x"])}  # the child asks for its parent's dotted order


def _edits_its_tree(inputs: dict[str, Any]) -> Any:
    tree = get_current_run_tree()
    tree.tags = ["edited"]
    tree.extra["seen"] = True
    return {"answer": 1}


TARGET_KINDS = [_plain, _not_a_dict, _int_keys, _raises, _traces_a_child, _edits_its_tree]


def _run_fields(run: Any) -> dict[str, Any]:
    fields = dict(run.__dict__)
    for fresh in ("id", "trace_id", "start_time", "end_time", "dotted_order"):
        fields.pop(fresh)
    fields["extra"] = {k: v for k, v in fields["extra"].items() if k != "traceback"}
    fields["child_runs"] = [(c.name, c.inputs, c.outputs, c.parent_run_id == run.id) for c in run.child_runs]
    return {**fields, "fields_set": sorted(run.model_fields_set), "extras": run.__pydantic_extra__}


@pytest.mark.parametrize("kind", TARGET_KINDS, ids=lambda f: f.__name__)
def test_a_sync_target_records_the_run_an_async_one_does(kind: Any) -> None:
    async def as_async(inputs: dict[str, Any]) -> Any:
        return kind(inputs)

    session = uuid.uuid4()
    example = EXAMPLES[2]
    sync_target, async_target = Target(kind), Target(as_async)
    for runner in (sync_target, async_target):
        runner.check_signature()
        runner.name, runner.session_id = "target", session
    sync_run = sync_target.run_sync(example, 1)
    async_run = asyncio.run(async_target.run_async(example, 1))
    assert _run_fields(sync_run) == _run_fields(async_run)
    assert sync_run.trace_id == sync_run.id and sync_run.start_time <= sync_run.end_time
    touched = kind in (_traces_a_child, _edits_its_tree)  # the tree's dotted order was asked for
    assert (sync_run.dotted_order is not None) == touched == (async_run.dotted_order is not None)
    if kind is _traces_a_child:
        [child] = sync_run.child_runs
        assert child.dotted_order.startswith(f"{sync_run.dotted_order}.")
