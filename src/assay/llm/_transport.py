"""The transport under the chat client: POST bytes, get status, headers and bytes back.

Two implementations: ``H11Transport`` (HTTP/1.1 on asyncio streams) for ``http://`` model
servers, where a judge pipeline makes hundreds of calls a second and httpx's per-request CPU
(~1.5 ms, most of it in connection-pool bookkeeping) would be the bottleneck; and
``HttpxTransport`` for ``https://`` (TLS, proxies from the environment).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: dict[str, str]  # lower-case names
    content: bytes


class TransportTimeout(Exception):
    """No complete reply within the timeout."""


class TransportFailure(Exception):
    """The connection could not be made or broke."""


class Transport(abc.ABC):
    @abc.abstractmethod
    async def post(
        self, url: str, content: bytes, headers: dict[str, str], timeout: float
    ) -> RawResponse: ...

    @abc.abstractmethod
    async def aclose(self) -> None: ...
