"""A target that returns a chat message, in any of the forms LangChain and OpenAI users
return, is compared as the message's text: an exact answer scores 1, not 0 against the
message's repr or JSON.

The OpenAI objects are the official client's, from a real call to the loopback server.
LangChain's ``AIMessage`` is not installed here (it brings the langsmith package and its
pytest plugin into the test environment); its two dict forms below are exactly what
``AIMessage(content="Paris").model_dump()`` and ``langchain_core.load.dumpd(...)`` give
(langchain-core 1.8.1), and the store keeps any pydantic message as its ``model_dump``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

import assay
from assay._output_text import message_text, output_text
from assay.evaluators import ExactMatchEvaluator, JsonValidityEvaluator, RegexEvaluator
from assay.testing import FakeOpenAIServer

LANGCHAIN_MODEL_DUMP = {
    "content": "Paris",
    "additional_kwargs": {},
    "response_metadata": {},
    "type": "ai",
    "name": None,
    "id": None,
    "tool_calls": [],
    "invalid_tool_calls": [],
    "usage_metadata": None,
}
LANGCHAIN_DUMPD = {
    "lc": 1,
    "type": "constructor",
    "id": ["langchain", "schema", "messages", "AIMessage"],
    "kwargs": {"content": "Paris", "type": "ai", "tool_calls": [], "invalid_tool_calls": []},
}


@pytest.fixture(scope="module")
def chat() -> Iterator[openai.OpenAI]:
    with FakeOpenAIServer(handler=lambda request: "Paris") as server:
        yield openai.OpenAI(base_url=server.base_url, api_key="sk-test")


def completion(chat: openai.OpenAI) -> Any:
    return chat.chat.completions.create(model="m", messages=[{"role": "user", "content": "Capital?"}])


TARGETS: dict[str, Callable[[openai.OpenAI], Any]] = {
    "an OpenAI ChatCompletion": completion,
    "its ChatCompletionMessage": lambda chat: completion(chat).choices[0].message,
    "its message as a dict": lambda chat: completion(chat).choices[0].message.model_dump(),
    "the ChatCompletion as a dict": lambda chat: completion(chat).model_dump(),
    "a LangChain AIMessage dumped": lambda chat: LANGCHAIN_MODEL_DUMP,
    "a LangChain AIMessage serialized": lambda chat: LANGCHAIN_DUMPD,
    "a message in the output key": lambda chat: {"output": {"role": "assistant", "content": "Paris"}},
    "content parts": lambda chat: {"role": "assistant", "content": [{"type": "text", "text": "Paris"}]},
}


@pytest.mark.parametrize("form", TARGETS)
def test_a_target_returning_a_message_scores_on_its_text(
    form: str, chat: openai.OpenAI, tmp_path: Path
) -> None:
    def target(inputs: dict[str, Any]) -> Any:
        return TARGETS[form](chat)

    results = assay.evaluate(
        target,
        data=[
            {"inputs": {"q": "capital of France"}, "outputs": {"output": "Paris"}},
            {"inputs": {"q": "capital of France, aliases"}, "outputs": {"output": ["Paree", "Paris"]}},
        ],
        evaluators=[ExactMatchEvaluator(), RegexEvaluator(pattern=r"^Paris$", name="regex")],
        client=assay.Client(str(tmp_path / "assay.db")),
    )
    rows = list(results)
    scores = [(r["evaluation_results"]["results"]) for r in rows]
    assert [[(e.key, e.score, e.error) for e in row] for row in scores] == [
        [("exact_match", 1.0, None), ("regex", 1.0, None)]
    ] * 2


def test_a_message_reference_is_read_as_its_text_too() -> None:
    evaluator = ExactMatchEvaluator()
    run = assay.schemas.Run(outputs={"output": "Paris"})
    example = assay.schemas.Example(inputs={}, outputs={"role": "assistant", "content": "Paris"})
    assert evaluator.evaluate_run(run, example).score == 1.0


def test_a_message_holding_json_is_checked_as_json() -> None:
    run = assay.schemas.Run(outputs={"role": "assistant", "content": '{"city": "Paris"}'})
    assert JsonValidityEvaluator().evaluate_run(run).score == 1.0


@pytest.mark.parametrize(
    "data",
    [
        {"title": "T", "content": "body"},  # a record with a content field is data, not a message
        {"type": "article", "content": "body"},
    ],
)
def test_a_dict_with_content_but_no_speaker_is_not_taken_for_a_message(data: dict[str, Any]) -> None:
    assert message_text(data) is None
    run = assay.schemas.Run(outputs={"output": data})
    example = assay.schemas.Example(inputs={}, outputs={"output": dict(data)})
    assert ExactMatchEvaluator().evaluate_run(run, example).score == 1.0  # compared as values
    changed = assay.schemas.Example(inputs={}, outputs={"output": {**data, "content": "other"}})
    assert ExactMatchEvaluator().evaluate_run(run, changed).score == 0.0


def test_a_conversation_of_langchain_dicts_names_each_speaker() -> None:
    turns = [{"type": "human", "content": "Capital?"}, {"type": "ai", "content": "Paris"}]
    assert output_text(turns) == "human: Capital?\nai: Paris"
