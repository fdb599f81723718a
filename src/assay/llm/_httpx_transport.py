"""httpx for ``https://`` model servers (TLS, proxies from the environment)."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from typing import TYPE_CHECKING

from assay.errors import require_extra
from assay.llm._transport import RawResponse, Transport, TransportFailure, TransportTimeout

if TYPE_CHECKING:
    import httpx

# httpcore matches queued requests to pooled connections in O(requests x connections): at 100
# requests in flight that cost seconds. Several small pools keep each match cheap.
POOL_SHARDS = 16


class HttpxTransport(Transport):
    def __init__(self) -> None:
        httpx = require_extra("httpx", "judge", feature="calling a judge model")
        _cache_missing_sniffio()
        self._clients = [
            httpx.AsyncClient(
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
                headers={"User-Agent": "assay"},
            )
            for _ in range(POOL_SHARDS)
        ]
        self._turn = itertools.count()

    async def post(self, url: str, content: bytes, headers: dict[str, str], timeout: float) -> RawResponse:
        import httpx

        client: httpx.AsyncClient = self._clients[next(self._turn) % POOL_SHARDS]
        try:
            response = await client.post(url, content=content, headers=headers, timeout=timeout)
        except httpx.TimeoutException:
            raise TransportTimeout(f"no reply within {timeout:g} s") from None
        except httpx.TransportError as exc:
            raise TransportFailure(f"{type(exc).__name__}: {exc}") from None
        return RawResponse(response.status_code, dict(response.headers), response.content)

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()


def _cache_missing_sniffio() -> None:
    # httpcore runs `import sniffio` on every request; when sniffio is not installed, each
    # failed import searches sys.path again (a fifth of a call's CPU here). Recording the
    # absence, as the import system does for a blocked module, makes the check free.
    if importlib.util.find_spec("sniffio") is None:
        sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]
