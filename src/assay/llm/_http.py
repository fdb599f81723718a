"""POSTing JSON to a model server with bounded retries; runs on the I/O loop only."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import orjson

from assay.llm import _io_loop
from assay.llm._limits import ModelLimiter
from assay.llm.errors import MissingExtraError, ModelCallError
from assay.llm.retry import RETRYABLE_STATUSES, RetryPolicy, parse_retry_after

if TYPE_CHECKING:
    import httpx

_client: Optional[tuple[asyncio.AbstractEventLoop, httpx.AsyncClient]] = None


def http_client() -> httpx.AsyncClient:
    """The pooled HTTP client of the I/O loop (one per process)."""
    global _client
    loop = asyncio.get_running_loop()
    if _client is None or _client[0] is not loop:
        try:
            import httpx
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise MissingExtraError(
                "judge models need httpx: pip install 'assay[judge]'"
            ) from exc
        client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=1024, max_keepalive_connections=256),
            headers={"User-Agent": "assay"},
        )
        _io_loop.add_closer(client.aclose)
        _client = (loop, client)
    return _client[1]


@dataclass(frozen=True)
class Endpoint:
    url: str
    headers: dict[str, str]
    timeout: float
    limiter: ModelLimiter
    retry: RetryPolicy
    secret: Optional[str]  # scrubbed from any text we keep


class HTTPStatusFailure(Exception):
    """A non-retryable status; the caller decides (fallback or error)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def post_json(endpoint: Endpoint, body: dict[str, Any]) -> dict[str, Any]:
    """The decoded JSON reply; retries timeouts, connection errors, 429/5xx, garbled bodies."""
    import httpx

    payload = orjson.dumps(body)
    failure, status = "", None
    for attempt in range(1, endpoint.retry.max_attempts + 1):
        retry_after: Optional[float] = None
        try:
            async with endpoint.limiter:
                response = await http_client().post(
                    endpoint.url, content=payload, headers=endpoint.headers,
                    timeout=endpoint.timeout,
                )
        except httpx.TimeoutException:
            failure, status = f"no reply within {endpoint.timeout:g} s", None
        except httpx.TransportError as exc:
            failure, status = f"connection failed ({type(exc).__name__}: {exc})", None
        else:
            status = response.status_code
            if status == 200:
                decoded = _decode(response.content)
                if decoded is not None:
                    return decoded
                failure = "the server sent a body that is not a chat completion JSON object"
            elif status in RETRYABLE_STATUSES:
                failure = f"HTTP {status}: {error_message(response.content, endpoint.secret)}"
                retry_after = parse_retry_after(response.headers.get("retry-after"))
            else:
                raise HTTPStatusFailure(status, error_message(response.content, endpoint.secret))
        if attempt < endpoint.retry.max_attempts:
            await asyncio.sleep(endpoint.retry.delay(attempt, retry_after))
    raise ModelCallError(
        f"model call to {endpoint.url} failed after {endpoint.retry.max_attempts} attempt(s): "
        f"{failure}",
        status=status, attempts=endpoint.retry.max_attempts,
    )


def _decode(content: bytes) -> Optional[dict[str, Any]]:
    try:
        decoded = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(decoded, dict) or not decoded.get("choices"):
        return None
    return decoded


def error_message(content: bytes, secret: Optional[str], limit: int = 300) -> str:
    """The server's error text (OpenAI's ``{"error": {"message": ...}}`` or raw), key scrubbed."""
    text = content.decode("utf-8", "replace")
    try:
        decoded = orjson.loads(content)
    except orjson.JSONDecodeError:
        decoded = None
    if isinstance(decoded, dict):
        error = decoded.get("error", decoded)
        if isinstance(error, dict) and error.get("message"):
            text = str(error["message"])
        elif isinstance(error, str):
            text = error
    if secret:
        text = text.replace(secret, "***")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
