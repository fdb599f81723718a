"""Port of langsmith-sdk python/tests/unit_tests/evaluation/test_runner.py (the parts about
``evaluate`` itself), in our words.

Upstream fakes the server behind a mocked HTTP session; here ``evaluate`` writes to
assay's real store (the ``client`` fixture: a SQLite file of the test's own). Tests of
private helpers (``_get_target_args``, ``_normalize_evaluator_func``...) become tests of
what ``evaluate`` does with the same functions. Wall-clock checks upstream (a 3 s sleep
that must not hold the other rows) become an event the slow row waits on.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import threading
import uuid
from typing import Any

import pytest

from assay import Client, aevaluate, evaluate
from assay.errors import ExperimentError
from assay.evaluation.evaluator import DynamicComparisonRunEvaluator
from assay.schemas import Example, Run

SPLIT_SIZE = 3
NUM_REPETITIONS = 4


def _examples(client: Client, count: int = 10) -> list[Example]:
    name = f"ds-{uuid.uuid4().hex[:8]}"
    client.create_dataset(name)
    client.create_examples(
        examples=[
            {"inputs": {"in": i}, "outputs": {"answer": i + 1}, "metadata": {"index": i}}
            for i in range(count)
        ],
        dataset_name=name,
    )
    return sorted(client.list_examples(dataset_name=name), key=lambda e: e.inputs["in"])


def score_value_first(run: Run, example: Example) -> dict[str, Any]:
    return {"score": 0.3}


def score_unpacked_inputs_outputs(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    return {"score": outputs["output"]}


def score_unpacked_inputs_outputs_reference(
    inputs: dict[str, Any], outputs: dict[str, Any], reference_outputs: dict[str, Any]
) -> dict[str, Any]:
    return {"score": reference_outputs["answer"]}


def score_unpacked_inputs_outputs_attachments(
    inputs: dict[str, Any], outputs: dict[str, Any], attachments: dict[str, Any]
) -> dict[str, Any]:
    return {"score": outputs["output"]}


def score_unpacked_outputs(outputs: dict[str, Any]) -> dict[str, Any]:
    return {"score": outputs["output"]}


def eval_float(run: Run, example: Example) -> float:
    return 0.2


def eval_str(run: Run, example: Example) -> str:
    return "good"


def eval_list(run: Run, example: Example) -> list[dict[str, Any]]:
    return [{"score": True, "key": "list_eval_bool"}, {"score": 1, "key": "list_eval_int"}]


ROW_EVALUATORS = [
    score_value_first,
    score_unpacked_inputs_outputs,
    score_unpacked_inputs_outputs_reference,
    score_unpacked_inputs_outputs_attachments,
    score_unpacked_outputs,
    eval_float,
    eval_str,
    eval_list,
]


def summary_eval_runs_examples(runs_: list[Run], examples_: list[Example]) -> dict[str, Any]:
    return {"score": len(runs_[0].dotted_order or "")}


def summary_eval_inputs_outputs(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> Any:
    return [{"score": len([x["in"] for x in inputs])}]


def summary_eval_outputs_reference(
    outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]
) -> int:
    return len([x["answer"] for x in reference_outputs])


SUMMARY_EVALUATORS = [summary_eval_runs_examples, summary_eval_inputs_outputs, summary_eval_outputs_reference]


@pytest.mark.parametrize("upload_results", [False, True])
@pytest.mark.parametrize("blocking", [False, True])
def test_evaluate_results(client: Client, blocking: bool, upload_results: bool) -> None:
    dev_split = _examples(client)[:SPLIT_SIZE]
    n_preds = SPLIT_SIZE * NUM_REPETITIONS
    others_seen = threading.Event()  # set once the caller has every other row
    first = dev_split[0].id
    slow_started = threading.Lock()
    slow_taken = False

    def predict(inputs: dict[str, Any]) -> dict[str, Any]:
        nonlocal slow_taken
        with slow_started:
            slow = not blocking and not slow_taken and inputs["in"] == 0
            slow_taken = slow_taken or slow
        if slow:  # one slow row must not hold back the others (a guard, not a time bound)
            assert others_seen.wait(timeout=120), "rows were held back behind a slow one"
        return {"output": inputs["in"] + 1}

    results = evaluate(
        predict,
        client=client,
        data=dev_split,
        evaluators=ROW_EVALUATORS,
        summary_evaluators=SUMMARY_EVALUATORS,
        num_repetitions=NUM_REPETITIONS,
        blocking=blocking,
        upload_results=upload_results,
        max_concurrency=None,
    )
    if not blocking:
        seen = 0
        for _ in results:
            seen += 1
            if seen == n_preds - 1:
                others_seen.set()
        assert seen == n_preds
        assert first in {row["example"].id for row in results}

    for row in results:
        assert row["run"].outputs == {"output": row["example"].inputs["in"] + 1}
        found = row["evaluation_results"]["results"]
        assert len(found) == len(ROW_EVALUATORS) + 1
        assert all(r.score is not None or r.value is not None for r in found)
    assert len(results._summary_results["results"]) == len(SUMMARY_EVALUATORS)
    assert (client.store.list_experiments() != []) is upload_results

    if upload_results:
        _rescore_by_name(client, results.experiment_name, blocking, [e.id for e in dev_split], n_preds)


def _rescore_by_name(client: Client, name: str, blocking: bool, example_ids: list[Any], n_preds: int) -> None:
    def score_value(run: Run, example: Example) -> dict[str, Any]:
        return {"score": 0.7}

    ex_results = evaluate(name, evaluators=[score_value], client=client, blocking=blocking)
    second_item = next(itertools.islice(iter(ex_results), 1, 2))
    first_list, second_list = list(ex_results), list(ex_results)
    assert len(first_list) == len(second_list) == n_preds
    assert first_list == second_list
    assert second_item == next(itertools.islice(iter(ex_results), 1, 2))
    for row in ex_results:
        assert row["example"].id in example_ids
        assert row["evaluation_results"]["results"][0].score == 0.7
        assert row["run"].reference_example_id in example_ids
    # Documented difference: LangSmith adds the same feedback a second time; assay refuses
    # to store an evaluator's results twice unless told to replace them.
    with pytest.raises(ExperimentError, match="replace=True"):
        evaluate(name, evaluators=[score_value], client=client, blocking=blocking)


def test_evaluate_results_bad_list_and_metadata_target(client: Client) -> None:
    """The tail of upstream's test_evaluate_results: a list of non-dicts is an errored
    result (upstream: ``extra == {"error": True}``; assay: ``error`` set), and a target
    taking ``metadata`` gets the example's."""
    examples = _examples(client)

    def bad_eval_list(run: Run, example: Example) -> list[Any]:
        return ["foo", 1]

    results = evaluate(
        lambda inputs: {"output": inputs["in"]},
        client=client,
        data=examples[:SPLIT_SIZE],
        evaluators=[bad_eval_list],
        num_repetitions=NUM_REPETITIONS,
    )
    for row in results:
        assert row["evaluation_results"]["results"][0].error is not None

    def predict_with_meta(inputs: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        return metadata

    for row, example in zip(client.evaluate(predict_with_meta, data=examples[:1]), examples, strict=False):
        assert row["run"].outputs == example.metadata


def test_evaluate_raises_for_async(client: Client) -> None:
    """Documented difference: LangSmith refuses an async target in ``evaluate`` and asks
    for ``aevaluate``; assay runs it on a private event loop."""

    async def my_func(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"out": inputs["in"]}

    async def my_other_func(inputs: dict[str, Any], other_val: int) -> dict[str, Any]:
        return {"out": inputs["in"] + other_val}

    examples = _examples(client, 2)
    assert [r["run"].outputs for r in evaluate(my_func, data=examples, client=client)] == [
        {"out": 0},
        {"out": 1},
    ]
    partial = functools.partial(my_other_func, other_val=3)
    assert [r["run"].outputs for r in evaluate(partial, data=examples, client=client)] == [
        {"out": 3},
        {"out": 4},
    ]


async def async_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"seen": ["inputs"]}


async def async_inputs_attachments(inputs: dict[str, Any], attachments: dict[str, Any]) -> dict[str, Any]:
    return {"seen": ["inputs", "attachments"]}


async def async_inputs_metadata(inputs: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    return {"seen": ["inputs", "metadata"]}


async def async_inputs_attachments_metadata(
    inputs: dict[str, Any], attachments: dict[str, Any], metadata: dict[str, Any]
) -> dict[str, Any]:
    return {"seen": [inputs == {"in": 0}, attachments == {}, metadata == {"index": 0}]}


async def async_extra_args(
    inputs: dict[str, Any], attachments: dict[str, Any], foo: str = "bar"
) -> dict[str, Any]:
    return {"seen": [foo]}


_VALID_TARGETS = [
    lambda inputs: {"seen": [inputs == {"in": 0}]},
    lambda inputs, attachments: {"seen": [attachments == {}]},
    lambda inputs, metadata: {"seen": [metadata == {"index": 0}]},
    lambda metadata, inputs, attachments: {"seen": [metadata == {"index": 0}, inputs == {"in": 0}]},
    async_inputs,
    async_inputs_attachments,
    async_inputs_metadata,
    async_inputs_attachments_metadata,
    lambda inputs, *, optional=None: {"seen": [optional is None]},
    lambda inputs, attachments, *, optional=None: {"seen": [optional is None]},
    lambda inputs, *, attachments=None: {"seen": [attachments is None]},
    lambda inputs, metadata, attachments, foo="bar": {"seen": [foo == "bar", metadata == {"index": 0}]},
    async_extra_args,
]


@pytest.mark.parametrize("blocking", [False, True])
@pytest.mark.parametrize("target", _VALID_TARGETS)
def test__get_target_args(client: Client, target: Any, blocking: bool) -> None:
    """The valid targets of upstream's table, run: each gets what it names."""
    [row] = list(evaluate(target, data=_examples(client, 1), client=client, blocking=blocking))
    assert row["run"].error is None, row["run"].error
    assert False not in row["run"].outputs["seen"]


@pytest.mark.parametrize(
    "target, message",
    [
        (lambda x, y: None, "When passing multiple positional arguments without default values"),
        (lambda input, attachment: None, "When passing multiple positional arguments without default values"),
        (
            lambda inputs, attachments, extra, extra2: None,
            "Target function must accept at most three arguments without default values",
        ),
        (lambda *, foo="bar": None, "Target function must accept at least one positional argument (inputs)"),
    ],
)
def test__get_target_args_invalid(client: Client, target: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate(target, data=_examples(client, 1), client=client)


def target(inputs: dict[str, Any], attachments: dict[str, Any]) -> dict[str, Any]:
    return {"foo": "bar"}


async def atarget(inputs: dict[str, Any], attachments: dict[str, Any]) -> dict[str, Any]:
    return {"foo": "bar"}


def test_passing_kwargs_is_working(client: Client) -> None:
    def mixed(
        inputs: dict[str, Any], outputs: dict[str, Any], *, reference_outputs: dict[str, Any], optional=None
    ):  # type: ignore[no-untyped-def]
        assert (list(inputs), list(outputs), list(reference_outputs)) == (["in"], ["foo"], ["answer"])
        return {"score": 1}

    async def amixed(
        inputs: dict[str, Any], outputs: dict[str, Any], *, reference_outputs: dict[str, Any], optional=None
    ):  # type: ignore[no-untyped-def]
        assert (list(inputs), list(outputs), list(reference_outputs)) == (["in"], ["foo"], ["answer"])
        return {"score": 1}

    for row in evaluate(target, data=_examples(client), evaluators=[mixed, amixed], client=client):
        assert [r.score for r in row["evaluation_results"]["results"]] == [1, 1]


# The evaluator signatures of upstream's VALID / INVALID tables, by the same names.
def valid_single_supported(inputs, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def valid_single_supported_async(inputs, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def valid_two_arbitrary(foo, bar, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def valid_two_arbitrary_async(foo, bar, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def valid_multiple_supported(inputs, outputs, reference_outputs, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def valid_multiple_supported_async(inputs, outputs, reference_outputs, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def valid_mixed_positional_and_keyword(foo, *, bar, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def valid_mixed_positional_and_keyword_with_reference_outputs(
    inputs, outputs, *, reference_outputs, optional=None
):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def valid_mixed_positional_and_keyword_async(foo, *, bar, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def valid_mixed_positional_and_keyword_with_reference_outputs_async(  # type: ignore[no-untyped-def]
    inputs, outputs, *, reference_outputs, optional=None
):
    return {"score": 1}


def kwarg_valid_two_arbitrary(*, foo, bar, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def kwarg_valid_two_arbitrary_async(*, foo, bar, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def kwarg_valid_multiple_supported(*, inputs, outputs, reference_outputs, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def kwarg_valid_multiple_supported_async(*, inputs, outputs, reference_outputs, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def valid_additional_kwargs(*, foo, bar, optional=None, **kwargs):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def valid_additional_kwargs_async(*, foo, bar, optional=None, **kwargs):  # type: ignore[no-untyped-def]
    return {"score": 1}


def invalid_single_unsupported(foo, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def invalid_single_unsupported_async(foo, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def invalid_three_args(inputs, outputs, foo, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def invalid_three_args_async(inputs, outputs, foo, *, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def kwarg_invalid_single_unsupported(*, foo, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def kwarg_invalid_single_unsupported_async(*, foo, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def kwarg_invalid_three_args(*, inputs, outputs, foo, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def kwarg_invalid_three_args_async(*, inputs, outputs, foo, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


def invalid_mixed_positional_and_keyword_three_args(baz, *, foo, bar, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


async def invalid_mixed_positional_and_keyword_three_args_async(baz, *, foo, bar, optional=None):  # type: ignore[no-untyped-def]
    return {"score": 1}


VALID_EVALUATOR_CASES = [
    (valid_single_supported, False),
    (valid_single_supported_async, True),
    (valid_two_arbitrary, False),
    (valid_two_arbitrary_async, True),
    (valid_multiple_supported, False),
    (valid_multiple_supported_async, True),
    (valid_mixed_positional_and_keyword, False),
    (valid_mixed_positional_and_keyword_with_reference_outputs, False),
    (valid_mixed_positional_and_keyword_async, True),
    (valid_mixed_positional_and_keyword_with_reference_outputs_async, True),
    (kwarg_valid_two_arbitrary, False),
    (kwarg_valid_two_arbitrary_async, True),
    (kwarg_valid_multiple_supported, False),
    (kwarg_valid_multiple_supported_async, True),
    (valid_additional_kwargs, False),
    (valid_additional_kwargs_async, True),
]

INVALID_EVALUATOR_CASES = [
    (invalid_single_unsupported, False),
    (invalid_single_unsupported_async, True),
    (invalid_three_args, False),
    (invalid_three_args_async, True),
    (kwarg_invalid_single_unsupported, False),
    (kwarg_invalid_single_unsupported_async, True),
    (kwarg_invalid_three_args, False),
    (kwarg_invalid_three_args_async, True),
    (invalid_mixed_positional_and_keyword_three_args, False),
    (invalid_mixed_positional_and_keyword_three_args_async, True),
]


@pytest.mark.parametrize("func, is_async", VALID_EVALUATOR_CASES)
async def test_normalize_evaluator_func_valid(client: Client, func: Any, is_async: bool) -> None:
    """Upstream only checks that nothing raises; here each row is also scored 1."""
    examples = _examples(client, 2)
    if is_async:
        results = await aevaluate(atarget, data=examples, evaluators=[func], client=client)
        rows = [row async for row in results]
    else:
        rows = list(evaluate(target, data=examples, evaluators=[func], client=client))
    assert [[r.score for r in row["evaluation_results"]["results"]] for row in rows] == [[1], [1]]


@pytest.mark.parametrize("func, is_async", INVALID_EVALUATOR_CASES)
async def test_normalize_evaluator_func_invalid(client: Client, func: Any, is_async: bool) -> None:
    examples = _examples(client, 2)
    with pytest.raises(ValueError, match="Invalid evaluator function"):
        if is_async:
            await aevaluate(atarget, data=examples, evaluators=[func], client=client)
        else:
            evaluate(target, data=examples, evaluators=[func], client=client)


def _summary_inputs(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"score": max(len(x["in"]) for x in inputs)}


def _summary_runs(runs_: list[Run], examples_: list[Example]) -> dict[str, Any]:
    return {"score": len(runs_[0].outputs["response"]) if runs_[0].outputs else 0}


def _summary_reference(outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]) -> int:
    return min(len(x["response"]) for x in outputs)


@pytest.mark.parametrize("evaluator", [_summary_runs, _summary_inputs, _summary_reference])
def test__normalize_summary_evaluator(client: Client, evaluator: Any) -> None:
    results = evaluate(
        lambda inputs: {"response": "c" * 12},
        data=[{"inputs": {"in": "b" * 12}}],
        summary_evaluators=[evaluator],
        client=client,
    )
    [summary] = results._summary_results["results"]
    assert summary.score == 12


def summary_eval_kwargs(bar, *, runs, examples):  # type: ignore[no-untyped-def]
    return None


def summary_eval_unknown_positional_args(runs, examples, foo):  # type: ignore[no-untyped-def]
    return None


@pytest.mark.parametrize("evaluator", [summary_eval_kwargs, summary_eval_unknown_positional_args])
def test__normalize_summary_evaluator_invalid(client: Client, evaluator: Any) -> None:
    with pytest.raises(ValueError, match="Invalid evaluator function"):
        evaluate(
            lambda inputs: inputs, data=[{"inputs": {"in": 1}}], summary_evaluators=[evaluator], client=client
        )


def _two_runs() -> tuple[list[Run], Example]:
    runs = [Run(outputs={"response": "c" * 2}), Run(outputs={"response": "e" * 3})]
    return runs, Example(inputs={"in": "b"}, outputs={"answer": "f" * 4})


def comparison_eval(runs, example):  # type: ignore[no-untyped-def]
    return [len(r.outputs["response"]) for r in runs]


def comparison_eval_simple(inputs, outputs, reference_outputs):  # type: ignore[no-untyped-def]
    return [len(o["response"]) for o in outputs]


def comparison_eval_no_inputs(outputs, reference_outputs):  # type: ignore[no-untyped-def]
    return [min(len(o["response"]), len(reference_outputs["answer"])) for o in outputs]


async def acomparison_eval(runs, example):  # type: ignore[no-untyped-def]
    return [len(r.outputs["response"]) for r in runs]


async def acomparison_eval_simple(inputs, outputs, reference_outputs):  # type: ignore[no-untyped-def]
    return [len(o["response"]) for o in outputs]


async def acomparison_eval_no_inputs(outputs, reference_outputs):  # type: ignore[no-untyped-def]
    return [min(len(o["response"]), len(reference_outputs["answer"])) for o in outputs]


def _scores_in_run_order(result: Any, runs: list[Run]) -> list[Any]:
    return [result.scores[run.id] for run in runs]


@pytest.mark.parametrize("evaluator", [comparison_eval, comparison_eval_simple, comparison_eval_no_inputs])
def test__normalize_comparison_evaluator(evaluator: Any) -> None:
    runs, example = _two_runs()
    result = DynamicComparisonRunEvaluator(evaluator).compare_runs(runs, example)
    assert _scores_in_run_order(result, runs) == [2, 3]


@pytest.mark.parametrize("evaluator", [acomparison_eval, acomparison_eval_simple, acomparison_eval_no_inputs])
async def test__normalize_comparison_evaluator_async(evaluator: Any) -> None:
    runs, example = _two_runs()
    result = await DynamicComparisonRunEvaluator(evaluator).acompare_runs(runs, example)
    assert _scores_in_run_order(result, runs) == [2, 3]


def comparison_eval_kwargs(bar, *, runs, example):  # type: ignore[no-untyped-def]
    return None


def comparison_eval_unknown_positional_args(runs, example, foo):  # type: ignore[no-untyped-def]
    return None


@pytest.mark.parametrize("evaluator", [comparison_eval_kwargs, comparison_eval_unknown_positional_args])
def test__normalize_comparison_evaluator_invalid(evaluator: Any) -> None:
    with pytest.raises(ValueError, match="Invalid evaluator function"):
        DynamicComparisonRunEvaluator(evaluator)


_EXISTING_EXPERIMENT_OPTIONS: list[dict[str, Any]] = [
    {"num_repetitions": 2},
    {"experiment": "foo"},
    {"upload_results": False},
    {"experiment_prefix": "foo"},
    {"data": "data"},
]


def test_invalid_evaluate_args(client: Client) -> None:
    for kwargs in _EXISTING_EXPERIMENT_OPTIONS:
        with pytest.raises(
            ValueError, match="Received invalid arguments. .* when target is an existing experiment."
        ):
            evaluate("foo", client=client, **kwargs)
    # Documented difference: experiment= names the comparison in assay (LangSmith refuses it).
    pairwise: list[dict[str, Any]] = [
        {"num_repetitions": 2},
        {"upload_results": False},
        {"summary_evaluators": [lambda a, b: 2]},
        {"data": "data"},
    ]
    for kwargs in pairwise:
        with pytest.raises(
            ValueError, match="Received invalid arguments. .* when target is two existing experiments."
        ):
            evaluate(("foo", "bar"), client=client, **kwargs)
    with pytest.raises(ValueError, match="Received invalid target. If a tuple is specified"):
        evaluate(("foo", "bar", "baz"), client=client)
    # Documented difference: LangSmith's ValueError "Received unsupported arguments"; assay
    # has no load_nested= (it always loads the nested runs) and refuses the unknown keyword.
    with pytest.raises(TypeError, match="unexpected keyword argument 'load_nested'"):
        evaluate((lambda x: x), data="data", load_nested=True, client=client)  # type: ignore[call-overload]


async def test_invalid_aevaluate_args(client: Client) -> None:
    for kwargs in _EXISTING_EXPERIMENT_OPTIONS:
        with pytest.raises(
            ValueError, match="Received invalid arguments. .* when target is an existing experiment."
        ):
            await aevaluate("foo", client=client, **kwargs)
    with pytest.raises(TypeError, match="unexpected keyword argument 'load_nested'"):
        await aevaluate((lambda x: x), data="data", load_nested=True, client=client)  # type: ignore[call-overload]


@pytest.mark.parametrize("upload_results", [False, True])
@pytest.mark.parametrize("blocking", [False, True])
async def test_aevaluate_results(client: Client, blocking: bool, upload_results: bool) -> None:
    """The async form of test_evaluate_results; upstream's timing checks become an event
    the slow row waits on (set once every other row has come out)."""
    dev_split = _examples(client)[:SPLIT_SIZE]
    n_preds = SPLIT_SIZE * NUM_REPETITIONS
    others_seen = asyncio.Event()
    slow_taken = False

    async def predict(inputs: dict[str, Any]) -> dict[str, Any]:
        nonlocal slow_taken
        slow = not blocking and not slow_taken and inputs["in"] == 0
        slow_taken = slow_taken or slow
        if slow:  # a guard against a hang, not a time bound
            await asyncio.wait_for(others_seen.wait(), timeout=120)
        return {"output": inputs["in"] + 1}

    results = await aevaluate(
        predict,
        client=client,
        data=dev_split,
        evaluators=ROW_EVALUATORS,
        summary_evaluators=SUMMARY_EVALUATORS,
        num_repetitions=NUM_REPETITIONS,
        blocking=blocking,
        upload_results=upload_results,
        max_concurrency=None,
    )
    if not blocking:
        seen = 0
        async for _ in results:
            seen += 1
            if seen == n_preds - 1:
                others_seen.set()
        assert seen == n_preds
    rows = [row async for row in results]
    assert len(rows) == n_preds
    for row in rows:
        assert row["run"].outputs == {"output": row["example"].inputs["in"] + 1}
        found = row["evaluation_results"]["results"]
        assert len(found) == len(ROW_EVALUATORS) + 1
        assert all(r.score is not None or r.value is not None for r in found)
    assert len(results._summary_results["results"]) == len(SUMMARY_EVALUATORS)
    assert (client.store.list_experiments() != []) is upload_results
    if upload_results:

        def score_value(run: Run, example: Example) -> dict[str, Any]:
            return {"score": 0.7}

        rescored = await aevaluate(results.experiment_name, evaluators=[score_value], client=client)
        again = [row async for row in rescored]
        assert len(again) == n_preds
        assert {row["example"].id for row in again} <= {e.id for e in dev_split}
        assert all(row["evaluation_results"]["results"][0].score == 0.7 for row in again)
