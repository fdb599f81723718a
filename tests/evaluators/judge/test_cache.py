"""The content-addressed cache of model calls, kept in the store."""

from __future__ import annotations

import orjson
from pydantic import BaseModel

from assay.llm import OpenAICompatibleClient, Price, StructuredChat, UsageMeter
from assay.llm._cache import NAMESPACE, cache_key
from assay.llm.structured import response_schema
from assay.store import Store, open_store
from assay.store.current import use_store
from assay.testing import FakeOpenAIServer

ASK = [{"role": "user", "content": "Is the sky blue?"}]


class Answer(BaseModel):
    yes: bool


def structured(server: FakeOpenAIServer, **options: object) -> StructuredChat:
    return StructuredChat(OpenAICompatibleClient(server.chat_model(**options)))


async def test_a_cache_hit_makes_no_call_and_reports_cached_usage(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: {"yes": True}
    first, second = UsageMeter(), UsageMeter()
    priced = structured(server, price=Price(1.0, 2.0))
    assert (await priced.ask(ASK, Answer, meter=first)).yes
    assert (await priced.ask(ASK, Answer, meter=second)).yes
    assert len(server.chat_requests) == 1
    assert first.total.calls == 1 and not first.total.cached and first.total.cost_usd > 0  # type: ignore[operator]
    assert second.total.cached and second.total.total_tokens == 0 and second.total.cost_usd == 0.0


async def test_the_cache_lives_in_the_current_store(server: FakeOpenAIServer, store: Store) -> None:
    server.handler = lambda request: {"yes": True}
    await structured(server).ask(ASK, Answer, meter=UsageMeter())
    other = open_store("sqlite://")
    with use_store(other):
        await structured(server).ask(ASK, Answer, meter=UsageMeter())
    assert len(server.chat_requests) == 2  # a different store starts cold
    client = OpenAICompatibleClient(server.chat_model())
    key = cache_key(client, ASK, response_schema(Answer))
    assert orjson.loads(store.cache_get(NAMESPACE, key) or b"{}")["content"] == '{"yes": true}'
    other.close()


async def test_the_key_follows_model_messages_parameters_and_schema(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: {"yes": True, "no": False}

    class Other(BaseModel):
        no: bool

    await structured(server).ask(ASK, Answer, meter=UsageMeter())
    await structured(server).ask([{"role": "user", "content": "Is grass green?"}], Answer, meter=UsageMeter())
    await structured(server, temperature=0.7).ask(ASK, Answer, meter=UsageMeter())
    await structured(server, model="other-model").ask(ASK, Answer, meter=UsageMeter())
    await structured(server).ask(ASK, Other, meter=UsageMeter())
    assert len(server.chat_requests) == 5
    # neither the key nor the server address is part of the key
    await structured(server, api_key="sk-another").ask(ASK, Answer, meter=UsageMeter())
    with FakeOpenAIServer(handler=server.handler) as moved:
        await structured(moved).ask(ASK, Answer, meter=UsageMeter())
        assert moved.chat_requests == []
    assert len(server.chat_requests) == 5


async def test_the_cache_can_be_turned_off(server: FakeOpenAIServer, monkeypatch: object) -> None:
    server.handler = lambda request: {"yes": True}
    off = structured(server, cache=False)
    for _ in range(2):
        await off.ask(ASK, Answer, meter=UsageMeter())
    assert len(server.chat_requests) == 2


async def test_an_unusable_reply_is_never_cached(server: FakeOpenAIServer, store: Store) -> None:
    server.script("garbage", '{"yes": false}')
    await structured(server).ask(ASK, Answer, meter=UsageMeter())
    client = OpenAICompatibleClient(server.chat_model())
    cached = store.cache_get(NAMESPACE, cache_key(client, ASK, response_schema(Answer)))
    assert cached is not None and orjson.loads(cached)["content"] == '{"yes": false}'


async def test_the_api_key_is_not_stored_in_the_cache(server: FakeOpenAIServer, store: Store) -> None:
    server.handler = lambda request: {"yes": True}
    await structured(server, api_key="sk-very-secret").ask(ASK, Answer, meter=UsageMeter())
    client = OpenAICompatibleClient(server.chat_model(api_key="sk-very-secret"))
    assert "sk-very-secret" not in repr(client.cache_identity())
    raw = store.cache_get(NAMESPACE, cache_key(client, ASK, response_schema(Answer)))
    assert raw is not None and b"sk-very-secret" not in raw
