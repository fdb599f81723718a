"""Trajectory match (strict / unordered / subset / superset, argument rules) over @traceable
tool runs and OpenAI tool_calls, and the LLM judge of a trajectory on the loopback server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import assay
from assay.evaluators import TrajectoryJudgeEvaluator, TrajectoryMatchEvaluator
from assay.evaluators.agents import ToolCall, TrajectoryError
from assay.schemas import EvaluationResult, Example, Run
from assay.store import open_store
from assay.store.current import use_store
from assay.testing import FakeOpenAIServer
from assay.tracing import trace_into, traceable


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


def openai_message(*calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
            }
            for i, c in enumerate(calls)
        ],
    }


def run_with_messages(*calls: dict[str, Any]) -> Run:
    return Run(
        outputs={
            "messages": [
                {"role": "user", "content": "hi"},
                openai_message(*calls),
                {"role": "tool", "content": "42"},
            ]
        }
    )


def score(evaluator: TrajectoryMatchEvaluator, run: Run, reference: list[Any]) -> EvaluationResult:
    result = evaluator.evaluate(run, Example(outputs={"trajectory": reference}))
    assert isinstance(result, EvaluationResult)
    return result


WEATHER, FLIGHT = call("weather", city="Paris"), call("flights", to="Paris", seats=2)


@pytest.mark.parametrize(
    ("mode", "actual", "expected"),
    [
        ("strict", [WEATHER, FLIGHT], 1),
        ("strict", [FLIGHT, WEATHER], 0),
        ("strict", [WEATHER], 0),
        ("strict", [WEATHER, FLIGHT, WEATHER], 0),
        ("unordered", [FLIGHT, WEATHER], 1),
        ("unordered", [WEATHER], 0),
        ("unordered", [WEATHER, FLIGHT, WEATHER], 0),
        ("subset", [WEATHER], 1),
        ("subset", [], 1),
        ("subset", [WEATHER, WEATHER], 0),
        ("superset", [WEATHER, call("hotel"), FLIGHT], 1),
        ("superset", [FLIGHT], 0),
    ],
)
def test_modes(mode: str, actual: list[dict[str, Any]], expected: int) -> None:
    result = score(TrajectoryMatchEvaluator(mode), run_with_messages(*actual), [WEATHER, FLIGHT])
    assert result.score == expected, result.comment
    assert result.metadata["actual"] == actual


def test_one_call_never_stands_for_two_references() -> None:
    """A loose rule lets WEATHER match both references; the matching is one-to-one."""
    evaluator = TrajectoryMatchEvaluator("superset", args="ignore")
    result = score(
        evaluator,
        run_with_messages(call("weather", city="Rome")),
        [call("weather", city="Paris"), call("weather", city="Rome")],
    )
    assert result.score == 0 and len(result.metadata["unmatched_reference"]) == 1
    assert len(result.metadata["pairs"]) == 1


def test_the_matching_is_maximal_not_greedy() -> None:
    # greedy would give the first actual call the "contains" reference both can match
    rules = {"search": {"q": "contains"}}
    actual = [call("search", q="paris weather"), call("search", q="paris")]
    reference = [call("search", q="paris"), call("search", q="weather")]
    assert (
        score(
            TrajectoryMatchEvaluator("unordered", arg_rules=rules), run_with_messages(*actual), reference
        ).score
        == 1
    )


def test_argument_rules() -> None:
    reference = [call("flights", to="Paris", seats=2, note="x")]
    actual = run_with_messages(call("flights", to="PARIS", seats=2.0, note="anything"))
    assert score(TrajectoryMatchEvaluator(), actual, reference).score == 0
    rules = {"flights": {"to": "case_insensitive", "note": "ignore"}}
    assert score(TrajectoryMatchEvaluator(arg_rules=rules), actual, reference).score == 1
    by_function = {"*": {"to": lambda a, e: a.lower() == e.lower(), "note": "ignore"}}
    assert score(TrajectoryMatchEvaluator(arg_rules=by_function), actual, reference).score == 1
    # "subset": the reference's arguments must match, extra actual ones are allowed
    extra = run_with_messages(call("flights", to="Paris", seats=2, note="x", cabin="eco"))
    assert score(TrajectoryMatchEvaluator(), extra, reference).score == 0
    assert score(TrajectoryMatchEvaluator(args="subset"), extra, reference).score == 1
    assert (
        score(TrajectoryMatchEvaluator(args="ignore"), run_with_messages(call("flights")), reference).score
        == 1
    )
    # strict types: the string "2" is not the number 2
    assert (
        score(
            TrajectoryMatchEvaluator(),
            run_with_messages(call("flights", to="Paris", seats="2", note="x")),
            reference,
        ).score
        == 0
    )


def test_strict_mismatch_is_shown() -> None:
    result = score(TrajectoryMatchEvaluator(), run_with_messages(WEATHER, WEATHER), [WEATHER, FLIGHT])
    assert result.metadata["first_mismatch"] == 1
    assert 'call 1: got weather({"city": "Paris"})' in (result.comment or "")
    assert "expected flights" in (result.comment or "")


def test_traceable_tool_runs_are_the_trajectory() -> None:
    @traceable(run_type="tool")
    def weather(city: str) -> str:
        return "sunny"

    @traceable(run_type="tool")
    def flights(to: str, seats: int) -> list[str]:
        return ["AF1"]

    @traceable
    def plan(city: str) -> str:  # a chain in between: its tools still count, in order
        weather(city)
        return str(flights(to=city, seats=2))

    root = Run(name="agent")
    with trace_into(root):
        plan("Paris")
    result = score(TrajectoryMatchEvaluator(), root, [WEATHER, FLIGHT])
    assert result.score == 1, result.comment


def test_reference_as_openai_messages() -> None:
    reference = [openai_message(WEATHER), {"role": "tool", "content": "sunny"}, openai_message(FLIGHT)]
    assert score(TrajectoryMatchEvaluator(), run_with_messages(WEATHER, FLIGHT), reference).score == 1


def test_missing_reference_is_an_error_naming_the_field() -> None:
    result = TrajectoryMatchEvaluator().evaluate(run_with_messages(WEATHER), Example(outputs={}))
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and "example.outputs['trajectory']" in result.error


def test_malformed_reference_names_its_position() -> None:
    result = TrajectoryMatchEvaluator().evaluate(
        run_with_messages(WEATHER), Example(outputs={"trajectory": [WEATHER, {"args": {}}]})
    )
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and "example.outputs['trajectory'][1] has no tool name" in result.error


def test_malformed_agent_arguments_are_a_failure_not_an_error() -> None:
    run = Run(
        outputs={
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [{"function": {"name": "weather", "arguments": "{city: Paris"}}],
                }
            ]
        }
    )
    result = score(TrajectoryMatchEvaluator(), run, [WEATHER])
    assert result.score == 0 and "arguments are not JSON" in (result.comment or "")


def test_bad_configuration_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="unknown trajectory mode 'loose'"):
        TrajectoryMatchEvaluator("loose")
    with pytest.raises(ValueError, match="unknown args mode"):
        TrajectoryMatchEvaluator(args="fuzzy")
    with pytest.raises(ValueError, match="rule for weather.city"):
        TrajectoryMatchEvaluator(arg_rules={"weather": {"city": "similar"}})
    with pytest.raises(ValueError, match="unknown trajectory source"):
        TrajectoryMatchEvaluator(source="logs")


def test_tool_call_errors_survive_into_calls() -> None:
    @traceable(run_type="tool")
    def failing() -> None:
        raise RuntimeError("no network")

    root = Run()
    with trace_into(root), pytest.raises(RuntimeError):
        failing()
    from assay.evaluators.agents._calls import calls_of_run

    (only,) = calls_of_run(root)
    assert isinstance(only, ToolCall) and "no network" in (only.error or "")
    assert issubclass(TrajectoryError, ValueError)


# -- end to end -------------------------------------------------------------------------
def agent(inputs: dict[str, Any]) -> dict[str, Any]:
    @traceable(run_type="tool", name="weather")
    def weather_tool(city: str) -> str:
        return "sunny"

    @traceable(run_type="tool", name="flights")
    def flights_tool(to: str, seats: int) -> list[str]:
        return ["AF1"]

    weather_tool(inputs["city"])
    if inputs.get("book"):
        flights_tool(to=inputs["city"], seats=2)
    return {"answer": "done"}


def test_evaluate_end_to_end_over_traceable_tools() -> None:
    data = [
        {"inputs": {"city": "Paris", "book": True}, "outputs": {"trajectory": [WEATHER, FLIGHT]}},
        {"inputs": {"city": "Paris"}, "outputs": {"trajectory": [WEATHER, FLIGHT]}},
    ]
    results = assay.evaluate(
        agent,
        data=data,
        client=assay.Client(database_url="sqlite://"),
        evaluators=[TrajectoryMatchEvaluator("strict"), TrajectoryMatchEvaluator("subset")],
        progress=False,
    )
    rows = [{r.key: r.score for r in row["evaluation_results"]["results"]} for row in results]
    assert rows == [
        {"trajectory_strict_match": 1, "trajectory_subset_match": 1},
        {"trajectory_strict_match": 0, "trajectory_subset_match": 1},
    ]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    store = open_store("sqlite://")
    with use_store(store), FakeOpenAIServer() as running:
        yield running
    store.close()


def test_llm_judge_sees_the_trajectory_and_scores_it(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ASSAY_JUDGE_CACHE", "ASSAY_JUDGE_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    server.handler = lambda request: (
        {"reasoning": "books twice", "value": "N"}
        if request.text.count("flights(") > 1
        else {"reasoning": "fine", "value": "Y"}
    )
    judge = TrajectoryJudgeEvaluator(model=server.chat_model())
    good = judge.evaluate(run_with_messages(WEATHER, FLIGHT), Example(inputs={"task": "trip"}))
    bad = judge.evaluate(run_with_messages(WEATHER, FLIGHT, FLIGHT), Example(inputs={"task": "trip"}))
    assert isinstance(good, EvaluationResult) and isinstance(bad, EvaluationResult)
    assert (good.score, good.comment, good.metadata["calls"]) == (1, "fine", 2)
    assert (bad.score, bad.value) == (0, "N")
    text = server.chat_requests[0].text
    assert '1. weather({"city": "Paris"})' in text and "trip" in text
    assert good.metadata["usage"]["calls"] == 1


def test_llm_judge_template_needs_the_trajectory(server: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError, match="trajectory"):
        TrajectoryJudgeEvaluator(model=server.chat_model(), prompt="Judge {output}")


def test_llm_judge_through_evaluate(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ASSAY_JUDGE_CACHE", "ASSAY_JUDGE_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    server.handler = lambda request: (
        {"reasoning": "weather only", "value": "N"}
        if "flights(" not in request.text
        else {"reasoning": "books the trip", "value": "Y"}
    )
    results = assay.evaluate(
        agent,
        data=[{"inputs": {"city": "Paris", "book": True}}, {"inputs": {"city": "Paris"}}],
        evaluators=[TrajectoryJudgeEvaluator(model=server.chat_model())],
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    verdicts = [(r.score, r.comment) for row in results for r in row["evaluation_results"]["results"]]
    assert verdicts == [(1, "books the trip"), (0, "weather only")]
    assert len(server.chat_requests) == 2


@pytest.mark.parametrize(
    ("mode", "expected"), [("strict", 1), ("unordered", 1), ("subset", 1), ("superset", 1)]
)
def test_a_chat_reference_without_tool_calls_is_an_empty_trajectory(mode: str, expected: int) -> None:
    reference = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello! No tool needed."},
    ]
    no_calls = Run(
        outputs={"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hi"}]}
    )
    result = score(TrajectoryMatchEvaluator(mode), no_calls, reference)
    assert result.error is None and result.score == expected
    called = score(TrajectoryMatchEvaluator(mode), run_with_messages(WEATHER), reference)
    assert called.score == (1 if mode == "superset" else 0)
