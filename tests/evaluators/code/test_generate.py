"""Generated test cases: inputs from a judge model on the loopback server or from
Hypothesis, expected outputs from the reference run in the sandbox, stored as a new
dataset version and reused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import Client
from assay.evaluation import EvaluationResult
from assay.evaluators.code import (
    CodeCorrectnessEvaluator,
    GenerationError,
    GenerationOptions,
    generate_test_cases,
)
from assay.schemas import Example, Run
from assay.testing import FakeOpenAIServer

# refuses negative numbers; answers 7 with a random value (not deterministic)
REFERENCE = (
    "import random\n"
    "def solution(n: int) -> int:\n"
    "    if n < 0:\n        raise ValueError('negative')\n"
    "    if n == 7:\n        return random.random()\n"
    "    return n * n\n"
)
PROBLEM = {"question": "Return the square of a non-negative integer n.", "func_name": "solution"}


def proposed(*arguments: Any, claimed: Any = 999) -> dict[str, Any]:
    return {
        "cases": [
            {"arguments": json.dumps(list(a)), "expected_output": json.dumps(claimed), "purpose": "p"}
            for a in arguments
        ]
    }


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    made = Client(database_url=f"sqlite:///{tmp_path / 'assay.db'}")
    yield made
    made.close()


def stored_problem(client: Client, reference: str = REFERENCE) -> Example:
    dataset = client.create_dataset("squares")
    client.create_examples(
        dataset_id=dataset.id,
        inputs=[{**PROBLEM, "test_cases": [{"input": 3, "expected_output": 9}]}],
        outputs=[{"reference_code": reference}],
    )
    (example,) = client.list_examples(dataset_id=dataset.id)
    return example


def version_of(client: Client, example: Example) -> int:
    dataset = client.store.get_dataset(id=example.dataset_id)
    assert dataset is not None
    return dataset.version


def test_expected_outputs_come_from_the_reference_never_from_the_model(
    server: FakeOpenAIServer, client: Client
) -> None:
    server.script(proposed([2], [-1], [7], [12], claimed=999))
    generated = generate_test_cases(
        stored_problem(client), model=server.chat_model(cache=False), n=4, store=client.store
    )
    assert generated.cases == [{"args": [2], "expected_output": 4}, {"args": [12], "expected_output": 144}]
    reasons = {tuple(d["args"]): d["reason"] for d in generated.dropped}
    assert "the reference failed" in reasons[(-1,)] and "ValueError" in reasons[(-1,)]
    assert "not deterministic" in reasons[(7,)]
    assert generated.source == "model"
    request = server.chat_requests[0]
    assert request.response_format is not None and "square of a non-negative" in request.text
    assert "solution(n: int)" in request.text  # the typed signature read from the reference


def test_generated_cases_are_a_new_dataset_version_and_a_rerun_is_free(
    server: FakeOpenAIServer, client: Client
) -> None:
    example = stored_problem(client)
    assert example.dataset_id is not None
    before = version_of(client, example)
    server.script(proposed([2], [5]))
    model = server.chat_model(cache=False)
    first = generate_test_cases(example, model=model, n=2, store=client.store)
    assert first.version == before + 1 and not first.reused
    stored = client.store.get_example(example.id)
    assert stored is not None and stored.inputs["generated_test_cases"] == first.cases
    old = list(client.store.iter_examples(example.dataset_id, version=before))
    assert "generated_test_cases" not in old[0].inputs  # the earlier version is unchanged
    again = generate_test_cases(example, model=model, n=2, store=client.store)
    assert again.reused and again.cases == first.cases
    assert len(server.chat_requests) == 1  # no second model call, no new version
    assert version_of(client, example) == before + 1
    server.script(proposed([4]))
    generate_test_cases(example, model=model, n=3, store=client.store)
    assert len(server.chat_requests) == 2  # another n is another generation


def test_a_reply_whose_arguments_are_not_a_json_array_is_sent_back(server: FakeOpenAIServer) -> None:
    bad = {"cases": [{"arguments": "2", "expected_output": "4", "purpose": "p"}]}
    server.script(bad, proposed([3]))
    generated = generate_test_cases(
        {**PROBLEM, "reference_code": REFERENCE}, model=server.chat_model(cache=False), n=1
    )
    assert generated.cases == [{"args": [3], "expected_output": 9}]
    assert "must be a JSON array" in server.chat_requests[1].text


def test_without_a_reference_the_models_claims_are_used_and_labelled(server: FakeOpenAIServer) -> None:
    server.script(proposed([2], claimed=4))
    generated = generate_test_cases(dict(PROBLEM), model=server.chat_model(cache=False), n=1)
    assert generated.source == "model-claimed" and generated.cases == [{"args": [2], "expected_output": 4}]


def test_the_evaluator_runs_given_plus_generated_cases(server: FakeOpenAIServer, client: Client) -> None:
    server.script(proposed([0], [10]))
    example = stored_problem(client, "def solution(n):\n    return n * n\n")
    generated = generate_test_cases(example, model=server.chat_model(cache=False), n=2, store=client.store)
    assert generated.example is not None
    wrong_on_zero = Run(outputs={"text": "def solution(n):\n    return n * n if n else 1\n"})
    given = CodeCorrectnessEvaluator().evaluate(wrong_on_zero, generated.example)
    both = CodeCorrectnessEvaluator(cases="given+generated").evaluate(wrong_on_zero, generated.example)
    assert isinstance(given, EvaluationResult) and isinstance(both, EvaluationResult)
    assert given.score == 1  # the hand-written case alone misses the bug
    assert both.score == pytest.approx(2 / 3) and both.metadata["total"] == 3


def test_generated_cases_alone_are_enough_when_none_are_given() -> None:
    generated = generate_test_cases({"reference_code": "def solution(n: int) -> int:\n    return -n\n"}, n=5)
    assert generated.example is not None and "test_cases" not in generated.example.inputs
    run = Run(outputs={"text": "def solution(n):\n    return -n\n"})
    result = CodeCorrectnessEvaluator(cases="given+generated").evaluate(run, generated.example)
    assert isinstance(result, EvaluationResult) and result.score == 1 and result.metadata["total"] == 5
    given_only = CodeCorrectnessEvaluator().evaluate(run, generated.example)
    assert isinstance(given_only, EvaluationResult) and given_only.score == 0
    assert "No test cases provided" in str(given_only.comment)


# -- property-based (Hypothesis, no model) ------------------------------------------------
TYPED = (
    "def solution(xs: list[int], k: int, tag: str | None = None) -> int:\n"
    "    return sum(x for x in xs if x > k) + len(tag or '')\n"
)


def reference_answer(xs: list[int], k: int, tag: str | None) -> int:
    return sum(x for x in xs if x > k) + len(tag or "")


def test_property_mode_draws_inputs_from_the_typed_signature() -> None:
    problem = {"func_name": "solution", "reference_code": TYPED}
    generated = generate_test_cases(problem, n=15)
    assert generated.source == "property" and len(generated.cases) == 15
    assert len({json.dumps(c["args"]) for c in generated.cases}) == 15
    for case in generated.cases:
        xs, k, tag = case["args"]
        assert isinstance(xs, list) and isinstance(k, int) and (tag is None or isinstance(tag, str))
        assert case["expected_output"] == reference_answer(xs, k, tag)
    assert generate_test_cases(problem, n=15).cases == generated.cases  # same seed, same cases
    other = generate_test_cases(problem, n=15, options=GenerationOptions(seed=1))
    assert other.cases != generated.cases


@pytest.mark.parametrize(
    "reference, message",
    [
        ("def solution(xs, k: int):\n    return 0\n", "without a type annotation: xs"),
        ("def solution(x: Widget):\n    return 0\n", "no strategy for the annotation 'Widget'"),
        ("def other(x: int):\n    return 0\n", "defines no function 'solution'"),
    ],
)
def test_property_mode_says_what_is_missing(reference: str, message: str) -> None:
    with pytest.raises(GenerationError, match=message):
        generate_test_cases({"reference_code": reference}, n=3)


def test_without_a_model_or_a_reference_there_is_nothing_to_generate_from() -> None:
    with pytest.raises(GenerationError, match="need a reference solution"):
        generate_test_cases(dict(PROBLEM), n=3)
