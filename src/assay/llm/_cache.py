"""The content-addressed cache of model calls, kept in the store.

The key hashes what decides the reply: model name and sampling parameters, messages and
response schema. It leaves out the API key and the server address (a vLLM server moved to
another port still answers the same). Only replies that parsed and passed their checks are
written, so a malformed reply is never replayed.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

import orjson

from assay.llm.chat import ChatClient, Message, ResponseSchema
from assay.store.base import Store

NAMESPACE = "llm.chat.v1"
log = logging.getLogger("assay.llm.cache")
T = TypeVar("T")

# One thread does all cache I/O: the event loop never blocks on SQLite, and an in-memory
# store (shared-cache mode, which has no busy timeout) sees one extra connection, not many.
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-llm-cache")


@dataclass(frozen=True)
class CachedReply:
    content: str
    prompt_tokens: int
    completion_tokens: int


#: which of n self-consistency samples a call is (0: the only one); samples 1.. are cached
#: apart, so n samples at a temperature are n replies, not one replayed n times
SAMPLE: ContextVar[int] = ContextVar("assay_judge_sample", default=0)


def cache_key(client: ChatClient, messages: list[Message], schema: ResponseSchema | None) -> str:
    material: dict[str, object] = {
        "client": client.cache_identity(),
        "messages": messages,
        "schema": None if schema is None else {"name": schema.name, "schema": schema.schema},
    }
    sample = SAMPLE.get()
    if sample:
        material["sample"] = sample
    digest = hashlib.sha256(orjson.dumps(material, option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()


class CallCache:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def get(self, key: str) -> CachedReply | None:
        try:
            raw = await _off_loop(lambda: self.store.cache_get(NAMESPACE, key))
        except Exception as exc:  # an unreadable cache costs a call, never the judgement
            log.warning("could not read the model-call cache: %s", exc)
            return None
        if raw is None:
            return None
        try:
            decoded = orjson.loads(raw)
            return CachedReply(
                str(decoded["content"]),
                int(decoded["prompt_tokens"]),
                int(decoded["completion_tokens"]),
            )
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            log.warning("ignoring a corrupt cache entry %s", key)
            return None

    async def put(self, key: str, reply: CachedReply) -> None:
        value = orjson.dumps(reply.__dict__)
        try:
            await _off_loop(lambda: self.store.cache_put(NAMESPACE, key, value))
        except Exception as exc:  # a cache that cannot write costs a call next time, no more
            log.warning("could not write the model-call cache: %s", exc)


async def _off_loop(operation: Callable[[], T]) -> T:
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor, _retry_locked, operation)


def _retry_locked(operation: Callable[[], T], attempts: int = 50) -> T:
    # SQLite shared-cache databases answer "locked" at once instead of waiting: wait here.
    for attempt in range(attempts):
        try:
            return operation()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.002 * (attempt + 1))
    raise AssertionError("unreachable")
