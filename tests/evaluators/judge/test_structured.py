"""Structured replies: JSON schema, the prompt fallback, the tolerant parser, reply retries."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from assay.llm import (
    ModelReplyError,
    OpenAICompatibleClient,
    StructuredChat,
    UsageMeter,
    response_schema,
)
from assay.llm.json_reply import ReplyParseError, parse_json_reply
from assay.testing import FakeOpenAIServer

ASK = [{"role": "system", "content": "You grade."}, {"role": "user", "content": "Is 2+2=4?"}]


class Grade(BaseModel):
    reasoning: str
    correct: bool


def chat(server: FakeOpenAIServer, reply_attempts: int = 2, **options: object) -> StructuredChat:
    client = OpenAICompatibleClient(server.chat_model(cache=False, **options))
    return StructuredChat(client, reply_attempts=reply_attempts)


async def test_the_request_carries_a_strict_json_schema(server: FakeOpenAIServer) -> None:
    server.script({"reasoning": "arithmetic", "correct": True})
    grade = await chat(server).ask(ASK, Grade, meter=UsageMeter())
    assert grade == Grade(reasoning="arithmetic", correct=True)
    request = server.chat_requests[0]
    assert request.response_format["type"] == "json_schema"  # type: ignore[index]
    assert request.response_format["json_schema"]["strict"] is True  # type: ignore[index]
    assert request.schema == {
        "type": "object",
        "additionalProperties": False,
        "required": ["reasoning", "correct"],
        "properties": {"reasoning": {"type": "string"}, "correct": {"type": "boolean"}},
    }


async def test_a_server_rejecting_response_format_gets_the_schema_in_the_prompt() -> None:
    with FakeOpenAIServer(reject_response_format=True) as server:
        server.script(
            'Sure! ```json\n{"reasoning": "ok", "correct": false}\n```', '{"reasoning": "b", "correct": true}'
        )
        structured = chat(server)
        assert (await structured.ask(ASK, Grade, meter=UsageMeter())).correct is False
        rejected, fallback = server.chat_requests
        assert rejected.response_format is not None and fallback.response_format is None
        assert fallback.messages[0]["role"] == "system"
        assert (
            '"correct"' in fallback.messages[0]["content"] and "You grade." in fallback.messages[0]["content"]
        )
        # remembered: the next call goes straight to the prompt form
        assert (await structured.ask(ASK, Grade, meter=UsageMeter())).correct is True
        assert server.chat_requests[2].response_format is None and len(server.chat_requests) == 3


async def test_json_schema_mode_never_falls_back() -> None:
    from assay.llm import ModelCallError

    with FakeOpenAIServer(reject_response_format=True) as server:
        with pytest.raises(ModelCallError, match="HTTP 400"):
            await chat(server, structured_output="json_schema").ask(ASK, Grade, meter=UsageMeter())


async def test_prompt_mode_never_sends_response_format(server: FakeOpenAIServer) -> None:
    server.script('{"reasoning": "r", "correct": true}')
    await chat(server, structured_output="prompt").ask(ASK, Grade, meter=UsageMeter())
    assert server.chat_requests[0].response_format is None
    assert "JSON schema" in server.chat_requests[0].messages[0]["content"]


async def test_malformed_json_is_retried_with_the_problem_shown(server: FakeOpenAIServer) -> None:
    server.script("I think it is correct.", '{"reasoning": "r"}', '{"reasoning": "r", "correct": true}')
    meter = UsageMeter()
    assert (await chat(server, reply_attempts=3).ask(ASK, Grade, meter=meter)).correct is True
    first, second, third = server.chat_requests
    assert "no JSON object" in second.messages[-1]["content"]
    assert second.messages[-2] == {"role": "assistant", "content": "I think it is correct."}
    assert "correct: Field required" in third.messages[-1]["content"]
    assert meter.total.calls == 3 and meter.total.prompt_tokens > 0
    assert meter.total.repaired == 1 and meter.total.unparsed == 0


async def test_a_reply_that_never_parses_is_a_reply_error(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: "no json here"
    meter = UsageMeter()
    with pytest.raises(ModelReplyError, match="2 attempt") as caught:
        await chat(server).ask(ASK, Grade, meter=meter)
    assert caught.value.reply == "no json here"
    # the reply and one bounded repair, then an error outcome, counted as unparsed
    assert len(server.chat_requests) == 2 and meter.total.calls == 2
    assert meter.total.unparsed == 1 and meter.total.repaired == 0


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '```json\n{"a": 1}\n```',
        'Here you go:\n{"a": 1}\nHope that helps {not json}',
        '<think>maybe {"a": 2}?</think>{"a": 1}',
        '  {"a": 1}  ',
    ],
)
def test_tolerant_parser_finds_the_object(text: str) -> None:
    assert parse_json_reply(text) == {"a": 1}


@pytest.mark.parametrize("text", ["", "yes", "[1, 2]", "{broken"])
def test_tolerant_parser_refuses_what_holds_no_object(text: str) -> None:
    with pytest.raises(ReplyParseError):
        parse_json_reply(text)


def test_response_schema_is_strict_for_nested_models() -> None:
    class Item(BaseModel):
        text: str
        ok: bool = True

    class Items(BaseModel):
        items: list[Item]

    schema = response_schema(Items).schema
    item = schema["$defs"]["Item"]
    assert item["additionalProperties"] is False and item["required"] == ["text", "ok"]
    assert "default" not in item["properties"]["ok"]
