"""POSTing JSON to a model server with bounded retries; runs on the I/O loop only."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson

from assay.errors import ModelCallError, require_extra
from assay.llm import _io_loop
from assay.llm._limits import ModelLimiter
from assay.llm._transport import Transport, TransportFailure, TransportTimeout
from assay.llm.retry import RETRYABLE_STATUSES, RetryPolicy, parse_retry_after

_transports: tuple[asyncio.AbstractEventLoop, dict[str, Transport]] | None = None


def transport_for(url: str) -> Transport:
    """The I/O loop's transport for ``url``: h11 for http://, httpx for https://."""
    global _transports
    loop = asyncio.get_running_loop()
    if _transports is None or _transports[0] is not loop:
        _transports = (loop, {})
    scheme = "http" if url.startswith("http://") else "https"
    transports = _transports[1]
    if scheme not in transports:
        transport = _new_transport(scheme)
        _io_loop.add_closer(transport.aclose)
        transports[scheme] = transport
    return transports[scheme]


def _new_transport(scheme: str) -> Transport:
    if scheme == "http":
        require_extra("h11", "judge", feature="calling a judge model")
        from assay.llm._h11_transport import H11Transport

        return H11Transport()
    require_extra("httpx", "judge", feature="calling a judge model")
    from assay.llm._httpx_transport import HttpxTransport

    return HttpxTransport()


@dataclass(frozen=True)
class Endpoint:
    url: str
    headers: dict[str, str]
    timeout: float
    limiter: ModelLimiter
    retry: RetryPolicy
    secret: str | None  # scrubbed from any text we keep


class HTTPStatusFailure(Exception):
    """A non-retryable status; the caller decides (fallback or error)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def post_json(endpoint: Endpoint, body: dict[str, Any]) -> dict[str, Any]:
    """The decoded JSON reply; retries timeouts, connection errors, 429/5xx, garbled bodies.

    A 429 tells the model's limiter to lower its limit (AIMD) and is retried without using
    up an attempt, up to ``retry.max_rate_limited`` times: while the limit settles at the
    server's capacity, a call waits its turn rather than failing its row.
    """
    payload = orjson.dumps(body)
    transport = transport_for(endpoint.url)
    failure, status = "", None
    attempt, throttled = 1, 0
    while True:
        retry_after: float | None = None
        try:
            async with endpoint.limiter.slot() as epoch:
                response = await transport.post(endpoint.url, payload, endpoint.headers, endpoint.timeout)
        except TransportTimeout as exc:
            failure, status = str(exc), None
        except TransportFailure as exc:
            failure, status = f"connection failed ({exc})", None
        else:
            status = response.status
            if status == 200:
                decoded = _decode(response.content)
                if decoded is not None:
                    endpoint.limiter.succeeded(_tokens(decoded))
                    return decoded
                failure = "the server sent a body that is not a chat completion JSON object"
            elif status in RETRYABLE_STATUSES:
                failure = f"HTTP {status}: {error_message(response.content, endpoint.secret)}"
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                if status == 429:
                    endpoint.limiter.throttled(epoch, retry_after)
                    if throttled < endpoint.retry.max_rate_limited:
                        throttled += 1
                        await asyncio.sleep(endpoint.retry.delay(min(throttled, 4), retry_after))
                        continue
            else:
                raise HTTPStatusFailure(status, error_message(response.content, endpoint.secret))
        if attempt >= endpoint.retry.max_attempts:
            break
        await asyncio.sleep(endpoint.retry.delay(attempt, retry_after))
        attempt += 1
    raise ModelCallError(
        f"model call to {endpoint.url} failed after {endpoint.retry.max_attempts} attempt(s): {failure}",
        status=status,
        attempts=endpoint.retry.max_attempts,
    )


def _tokens(decoded: dict[str, Any]) -> int:
    usage = decoded.get("usage")
    if not isinstance(usage, dict):
        return 0
    parts = (
        [usage.get("total_tokens")]
        if "total_tokens" in usage
        else [
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
        ]
    )
    return sum(max(0, part) for part in parts if isinstance(part, int) and not isinstance(part, bool))


def _decode(content: bytes) -> dict[str, Any] | None:
    try:
        decoded = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(decoded, dict) or not decoded.get("choices"):
        return None
    return decoded


def error_message(content: bytes, secret: str | None, limit: int = 300) -> str:
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
