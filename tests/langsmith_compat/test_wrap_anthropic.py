"""``wrap_anthropic`` with the official ``anthropic`` client (sync, async, ``stream=True``
and the ``stream()`` helper) against a loopback server speaking Anthropic's Messages API:
each call is an ``llm`` run under the current one, and inside an experiment it is stored
with the row."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from assay import Client, evaluate
from assay.run_helpers import trace
from assay.testing import FakeAnthropicServer
from assay.wrappers import wrap_anthropic

if TYPE_CHECKING:  # imported where used: each xdist worker collects this module (~2 s import)
    from anthropic import Anthropic, AsyncAnthropic

WEATHER = [
    {"type": "text", "text": "Let me look."},
    {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris", "days": 2}},
]


def _reply(request: dict[str, Any]) -> Any:
    last = request["messages"][-1]["content"]
    if "weather" in last:
        return WEATHER
    if "fail" in last:
        raise RuntimeError("the model is down")
    return f"echo {last.split()[-1]}"


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer(handler=_reply) as running:
        yield running


@pytest.fixture
def model(server: FakeAnthropicServer) -> Iterator[Anthropic]:
    """A wrapped client, closed after the test (an open socket left to the garbage
    collector warns in whichever test runs then)."""
    from anthropic import Anthropic

    with Anthropic(base_url=server.base_url, api_key="sk-ant-test", max_retries=0) as client:
        yield wrap_anthropic(client)


def test_a_call_is_an_llm_run_with_messages_reply_and_usage(
    model: Anthropic, server: FakeAnthropicServer
) -> None:
    client = model
    with trace("app") as root:
        reply = client.messages.create(
            model="claude-test",
            max_tokens=64,
            system="be brief",
            messages=[{"role": "user", "content": "say hello"}],
            stop_sequences=["###"],
        )
    assert reply.content[0].text == "echo hello"  # the caller gets Anthropic's object
    [run] = root.child_runs
    assert (run.name, run.run_type, run.error) == ("ChatAnthropic", "llm", None)
    assert run.inputs == {
        "model": "claude-test",
        "max_tokens": 64,
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "say hello"}],
        "stop_sequences": ["###"],
    }
    assert run.outputs["role"] == "assistant"
    assert run.outputs["content"] == [{"type": "text", "text": "echo hello", "citations": None}]
    assert run.outputs["usage_metadata"] == {"input_tokens": 4, "output_tokens": 2, "total_tokens": 6}
    assert run.metadata["ls_provider"] == "anthropic"
    assert (run.metadata["ls_model_name"], run.metadata["ls_max_tokens"]) == ("claude-test", 64)
    assert run.metadata["ls_stop"] == ["###"]
    assert server.requests[0]["system"] == "be brief"  # what was sent is unchanged


def test_a_tool_use_is_also_recorded_as_tool_calls(model: Anthropic) -> None:
    client = model
    with trace("app") as root:
        client.messages.create(
            model="m", max_tokens=64, messages=[{"role": "user", "content": "the weather?"}]
        )
    outputs = root.child_runs[0].outputs
    assert outputs["content"] == "Let me look."
    assert outputs["tool_calls"] == [
        {
            "id": "toolu_1",
            "type": "function",
            "index": 0,
            "function": {"name": "weather", "arguments": '{"city": "Paris", "days": 2}'},
        }
    ]
    assert outputs["stop_reason"] == "tool_use"


def test_a_streamed_call_is_recorded_as_it_is_read(model: Anthropic) -> None:
    client = model
    with trace("app") as root:
        stream = client.messages.create(
            model="m",
            max_tokens=64,
            messages=[{"role": "user", "content": "stream these words"}],
            stream=True,
        )
        assert root.child_runs[0].end_time is None  # open while the caller reads
        kinds = [event.type for event in stream]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"  # Anthropic's events, unchanged
    [run] = root.child_runs
    assert run.end_time is not None
    assert [block["text"] for block in run.outputs["content"]] == ["echo words"]
    assert run.outputs["stop_reason"] == "end_turn"
    assert run.outputs["usage_metadata"] == {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}


def test_a_streamed_tool_use_is_put_together(model: Anthropic) -> None:
    client = model
    with trace("app") as root:
        list(
            client.messages.create(
                model="m", max_tokens=64, messages=[{"role": "user", "content": "weather"}], stream=True
            )
        )
    outputs = root.child_runs[0].outputs
    assert outputs["content"] == "Let me look."
    assert outputs["tool_calls"][0]["function"] == {
        "name": "weather",
        "arguments": '{"city": "Paris", "days": 2}',
    }


def test_the_stream_helper_is_traced(model: Anthropic) -> None:
    client = model
    with trace("app") as root:
        with client.messages.stream(
            model="m", max_tokens=64, messages=[{"role": "user", "content": "helper text"}]
        ) as stream:
            text = "".join(stream.text_stream)
            final = stream.get_final_message()
    assert text == "echo text" and final.content[0].text == "echo text"
    [run] = root.child_runs
    assert (run.name, run.run_type) == ("ChatAnthropic", "llm")
    assert run.inputs["messages"] == [{"role": "user", "content": "helper text"}]
    assert run.outputs["content"][0]["text"] == "echo text"
    assert run.outputs["usage_metadata"]["output_tokens"] == 2
    assert run.end_time is not None


def test_a_failed_call_is_a_run_with_its_error(model: Anthropic) -> None:
    from anthropic import InternalServerError

    client = model
    with trace("app") as root, pytest.raises(InternalServerError):
        client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "fail"}])
    [run] = root.child_runs
    assert "InternalServerError" in (run.error or "") and "the model is down" in (run.error or "")


def test_the_async_client_and_its_stream_helper(server: FakeAnthropicServer) -> None:
    from anthropic import AsyncAnthropic

    async def calls() -> Any:
        async with AsyncAnthropic(base_url=server.base_url, api_key="k", max_retries=0) as raw:
            return await traced(wrap_anthropic(raw))

    async def traced(client: AsyncAnthropic) -> Any:
        with trace("app") as root:
            await client.messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": "one"}]
            )
            stream = await client.messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": "two"}], stream=True
            )
            async for _ in stream:
                pass
            async with client.messages.stream(
                model="m", max_tokens=8, messages=[{"role": "user", "content": "three"}]
            ) as helper:
                async for _ in helper.text_stream:
                    pass
        return root

    root = asyncio.run(calls())
    texts = [run.outputs["content"][0]["text"] for run in root.child_runs]
    assert texts == ["echo one", "echo two", "echo three"]


def test_calls_in_an_experiment_are_stored_with_the_row(model: Anthropic, tmp_path: Path) -> None:
    client = Client(str(tmp_path / "s.db"))

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        reply = model.messages.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": inputs["q"]}]
        )
        return {"answer": reply.content[0].text}

    evaluate(target, data=[{"q": "hi alpha"}, {"q": "hi beta"}], client=client, experiment="claude")
    roots = list(client.list_runs(project_name="claude", is_root=True))
    llm_runs = list(client.list_runs(project_name="claude", run_type="llm"))
    assert len(roots) == 2 and len(llm_runs) == 2
    assert sorted(r.outputs["content"][0]["text"] for r in llm_runs) == ["echo alpha", "echo beta"]
    assert {r.parent_run_id for r in llm_runs} == {r.id for r in roots}


def test_wrapping_twice_traces_once_and_something_else_is_refused(model: Anthropic) -> None:
    client = wrap_anthropic(model)
    with trace("app") as root:
        client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert len(root.child_runs) == 1
    with pytest.raises(TypeError, match="anthropic.Anthropic or AsyncAnthropic"):
        wrap_anthropic(object())


def test_the_beta_messages_are_traced_too(model: Anthropic, server: FakeAnthropicServer) -> None:
    with trace("app") as root:
        reply = model.beta.messages.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": "beta call"}]
        )
    assert reply.content[0].text == "echo call"
    [run] = root.child_runs
    assert (run.name, run.outputs["content"][0]["text"]) == ("ChatAnthropic", "echo call")
    assert len(server.requests) == 1
