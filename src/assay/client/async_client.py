"""``AsyncClient``: LangSmith's async client over the same local store as ``Client``.

Every ``Client`` method is awaitable here and runs on one worker thread of its own (the
store's calls stay in order and off the event loop); ``list_*`` methods are async
iterators, as LangSmith's are.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.client import Client

__all__ = ["AsyncClient"]


class AsyncClient:
    """``await client.create_dataset(...)``, ``async for example in client.list_examples(...)``."""

    def __init__(
        self, database_url: str | None = None, *, client: Client | None = None, **options: Any
    ) -> None:
        self.client = client or Client(database_url, **options)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-async-client")

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.client, name)  # AttributeError names what Client lacks
        if name.startswith("_") or not callable(method):
            return method  # type: ignore[no-any-return]
        if name.startswith("list_"):
            return functools.partial(self._listed, method)
        return functools.partial(self._called, method)

    async def _called(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        call = functools.partial(method, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._worker, call)

    async def _listed(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        for item in await self._called(lambda: list(method(*args, **kwargs))):
            yield item

    async def aclose(self) -> None:
        await self._called(self.client.close)
        self._worker.shutdown(wait=True)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()
