"""``wrap_openai`` with the official OpenAI client (sync, async, streamed) against the
loopback OpenAI-compatible server: each call is an ``llm`` run under the current one,
and inside an experiment it is stored with the row."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from openai import AsyncOpenAI, OpenAI

from assay import Client, aevaluate
from assay.run_helpers import trace
from assay.testing import FakeOpenAIServer
from assay.wrappers import wrap_openai


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(handler=lambda request: f"echo {request.text.split()[-1]}") as running:
        yield running


def _client(server: FakeOpenAIServer) -> OpenAI:
    return wrap_openai(OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0))


def test_a_call_is_an_llm_run_with_messages_reply_and_usage(server: FakeOpenAIServer) -> None:
    client = _client(server)
    with trace("app") as root:
        reply = client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "say hello"}], temperature=0
        )
    assert reply.choices[0].message.content == "echo hello"  # the caller gets OpenAI's object
    [run] = root.child_runs
    assert (run.name, run.run_type) == ("ChatOpenAI", "llm")
    assert run.inputs == {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "say hello"}],
        "temperature": 0,
    }
    assert run.outputs is not None
    assert run.outputs["role"] == "assistant" and run.outputs["content"] == "echo hello"
    assert run.outputs["usage_metadata"] == {"input_tokens": 2, "output_tokens": 2, "total_tokens": 4}
    assert run.metadata["ls_model_name"] == "gpt-test" and run.metadata["ls_provider"] == "openai"
    assert wrap_openai(client) is client  # wrapping again changes nothing
    with trace("again") as again:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert len(again.child_runs) == 1


def test_a_streamed_call_is_recorded_as_it_is_read(server: FakeOpenAIServer) -> None:
    client = _client(server)
    with trace("app") as root:
        stream = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "stream these words"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        [run] = root.child_runs
        assert run.end_time is None  # still being read
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == "echo words"
    assert run.outputs == {
        "role": "assistant",
        "content": "echo words",
        "usage_metadata": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
    }
    assert [event["name"] for event in run.events] == ["new_token"]


def test_the_async_client_and_an_experiment_store_the_calls(server: FakeOpenAIServer, client: Client) -> None:
    model = wrap_openai(AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0))

    async def app(inputs: dict) -> dict:
        reply = await model.chat.completions.create(
            model="m", messages=[{"role": "user", "content": inputs["question"]}]
        )
        return {"answer": reply.choices[0].message.content}

    async def run_experiment() -> list[dict]:
        data = [{"inputs": {"question": "name a colour"}}, {"inputs": {"question": "name a fruit"}}]
        results = await aevaluate(app, data=data, client=client)
        rows = [row async for row in results]
        await model.close()
        return rows

    rows = sorted(asyncio.run(run_experiment()), key=lambda row: row["example"].inputs["question"])
    assert [row["run"].outputs["answer"] for row in rows] == ["echo colour", "echo fruit"]
    stored = client.read_run(rows[0]["run"].id, load_child_runs=True)
    [llm] = stored.child_runs
    assert llm.run_type == "llm", llm
    assert llm.outputs["content"] == "echo colour", llm.outputs


def test_wrapping_something_else_says_what_it_takes() -> None:
    with pytest.raises(TypeError, match="takes an openai.OpenAI or AsyncOpenAI client"):
        wrap_openai(object())
