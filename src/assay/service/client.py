"""``RemoteEvaluator``: an evaluator served by ``assay serve-evaluators``, used like a local one.

Each call POSTs the run and the example (the store's value codec, see ``wire``) and
returns the results with the keys the server gave them. Connection errors, timeouts,
429 and 5xx are retried with exponential backoff (``Retry-After`` honoured); when the
attempts are spent, or the service refuses the request (401, 404, 422...), the result is
an error (excluded and counted, as for a local evaluator that raised), never a score.

The HTTP work runs on the process's shared I/O loop (the one the judges use), so pooled
connections outlive the event loop of any one ``evaluate()`` call.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any
from urllib.parse import quote

import orjson

from assay.errors import RemoteEvaluatorError
from assay.evaluation import BaseEvaluator
from assay.llm.http import (
    RawResponse,
    TransportFailure,
    TransportTimeout,
    call_on_io_loop,
    error_message,
    transport_for,
)
from assay.llm.retry import RETRYABLE_STATUSES, RetryPolicy, parse_retry_after
from assay.schemas import EvaluationResult, Example, Run
from assay.service.wire import decode_results, encode_request

__all__ = ["RemoteEvaluator", "TOKEN_ENV"]

TOKEN_ENV = "ASSAY_SERVICE_TOKEN"


class RemoteEvaluator(BaseEvaluator):
    """The evaluator ``name`` of the service at ``url`` (e.g. ``http://127.0.0.1:8766``).

    Args:
        url: the service's base address.
        name: the evaluator's name on the service (``GET /evaluators`` lists them).
        token: the service's token; default ``$ASSAY_SERVICE_TOKEN`` (none for a loopback
            service started without one).
        timeout: seconds for one attempt (connect, send, evaluate, reply).
        retries: further attempts after the first, on connection errors, timeouts, 429, 5xx.
        backoff: seconds before the first retry; doubled each time (with jitter), at most
            ``max_backoff``.
        key: the key of an errored result (default ``name``); successful results keep the
            keys the server sent.
    """

    def __init__(
        self,
        url: str,
        name: str,
        *,
        token: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.25,
        max_backoff: float = 10.0,
        key: str | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"RemoteEvaluator url must start with http:// or https://, got {url!r}")
        if timeout <= 0:
            raise ValueError(f"RemoteEvaluator timeout must be positive, got {timeout}")
        if retries < 0:
            raise ValueError(f"RemoteEvaluator retries must be >= 0, got {retries}")
        super().__init__(name=key or name)
        self.url = url.rstrip("/")
        self.remote_name = name
        self.endpoint = f"{self.url}/evaluators/{quote(name, safe='')}/evaluate"
        self.timeout = float(timeout)
        self.retry = RetryPolicy(max_attempts=retries + 1, initial_delay=backoff, max_delay=max_backoff)
        self._token = token if token is not None else os.environ.get(TOKEN_ENV) or None

    def __repr__(self) -> str:  # never shows the token
        return f"RemoteEvaluator({self.url!r}, {self.remote_name!r})"

    async def _aevaluate(self, run: Run, example: Example | None = None) -> list[EvaluationResult]:
        body = encode_request(run, example)
        results = await call_on_io_loop(self._post(body))
        for result in results:
            result.source_run_id = run.id
        return results

    async def _post(self, body: bytes) -> list[EvaluationResult]:
        transport = transport_for(self.endpoint)
        headers = {"content-type": "application/json", "accept": "application/json"}
        if self._token:
            headers["authorization"] = f"Bearer {self._token}"
        failure = ""
        for attempt in range(1, self.retry.max_attempts + 1):
            retry_after: float | None = None
            try:
                response = await transport.post(self.endpoint, body, headers, self.timeout)
            except TransportTimeout:
                failure = f"no reply within {self.timeout:g} s"
            except TransportFailure as exc:
                failure = f"connection failed ({exc})"
            else:
                if response.status == 200:
                    return decode_results(response.content)
                failure = self._describe(response)
                if response.status not in RETRYABLE_STATUSES:
                    raise RemoteEvaluatorError(f"{self._who()} refused the request: {failure}")
                retry_after = parse_retry_after(response.headers.get("retry-after"))
            if attempt < self.retry.max_attempts:
                await asyncio.sleep(self.retry.delay(attempt, retry_after))
        raise RemoteEvaluatorError(
            f"{self._who()} failed after {self.retry.max_attempts} attempt(s): {failure}"
        )

    def _describe(self, response: RawResponse) -> str:
        """``HTTP 404: <the service's detail>``; the token never appears in it."""
        try:
            detail = orjson.loads(response.content).get("detail")
        except (orjson.JSONDecodeError, AttributeError):
            detail = None
        if isinstance(detail, str):  # FastAPI's {"detail": "..."}; a 422 lists its errors
            content = orjson.dumps({"error": detail})
        else:
            content = response.content
        return f"HTTP {response.status}: {error_message(content, self._token)}"

    def _who(self) -> str:
        return f"remote evaluator {self.remote_name!r} at {self.url}"

    def describe(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "name": self.remote_name,
            "timeout": self.timeout,
            "attempts": self.retry.max_attempts,
        }
