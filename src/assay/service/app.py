"""The evaluator service's ASGI app: list the evaluators, run one on a run and an example.

Failures keep their one meaning each: an evaluator that raises answers 200 with an
errored result (data, as in a local run); a request the service cannot take is a 4xx
naming what was wrong; 429 (too many evaluations in flight) and 5xx are the ones a
client retries.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import FastAPI, HTTPException, Path
from fastapi.responses import JSONResponse, Response

from assay.evaluation.evaluator import RowEvaluator
from assay.evaluators.host_files import host_paths_refused
from assay.schemas import EvaluationResult, Example
from assay.service.guard import DEFAULT_MAX_BODY_BYTES, ServiceGuard
from assay.service.wire import EvaluateRequest, EvaluateResponse, EvaluatorInfo, encode_results

__all__ = ["DEFAULT_MAX_IN_FLIGHT", "create_app"]

DEFAULT_MAX_IN_FLIGHT = 64

_DETAIL = {
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"detail": {"type": "string"}},
                "required": ["detail"],
            }
        }
    }
}
_REFUSALS: dict[int | str, dict[str, Any]] = {
    401: {"description": "The token is missing or wrong (the service was started with one).", **_DETAIL},
    403: {"description": "A non-loopback Host on a service started without a token.", **_DETAIL},
    413: {"description": "The request body is over the size limit.", **_DETAIL},
    429: {"description": "Too many evaluations in flight; retry after the Retry-After seconds.", **_DETAIL},
}


class _InFlight:
    """Counts evaluations running; refuses (429) past the limit instead of queueing unboundedly."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0

    def __enter__(self) -> None:
        if self.running >= self.limit:
            raise HTTPException(
                429,
                f"{self.running} evaluations are in flight (the limit is {self.limit})",
                headers={"Retry-After": "1"},
            )
        self.running += 1

    def __exit__(self, *exc: object) -> None:
        self.running -= 1


def create_app(
    evaluators: dict[str, RowEvaluator],
    token: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
) -> Any:
    """The app serving ``evaluators`` (bound by ``assay.service.registry``)."""
    app = FastAPI(
        title="assay evaluators",
        summary="Named assay evaluators over HTTP: a run and an example in, evaluation results out.",
        version="1",
        docs_url=None,  # the interactive pages load scripts from a CDN; /openapi.json is the document
        redoc_url=None,
        responses=_REFUSALS,
    )
    in_flight = _InFlight(max_in_flight)

    @app.get("/health", summary="Liveness (no token needed)")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/evaluators", summary="The evaluators this service serves")
    async def list_evaluators() -> list[EvaluatorInfo]:
        return [EvaluatorInfo(name=name, is_async=e.is_async) for name, e in evaluators.items()]

    @app.post(
        "/evaluators/{name}/evaluate",
        summary="Run one evaluator on a run and its example",
        response_model=EvaluateResponse,
        responses={404: {"description": "No evaluator has that name.", **_DETAIL}},
    )
    async def evaluate(
        request: EvaluateRequest,
        name: str = Path(description="The evaluator's name.", json_schema_extra={"enum": list(evaluators)}),
    ) -> Response:
        evaluator = evaluators.get(name)
        if evaluator is None:
            known = ", ".join(sorted(evaluators))
            return JSONResponse({"detail": f"no evaluator named {name!r}; served: {known}"}, 404)
        with in_flight:
            results = await _run(evaluator, request)
        return Response(encode_results(name, results), media_type="application/json")

    return ServiceGuard(app, token, max_body_bytes)


async def _run(evaluator: RowEvaluator, request: EvaluateRequest) -> list[EvaluationResult]:
    example = request.example if request.example is not None else Example()
    with host_paths_refused():  # the caller is remote: content travels, host paths do not
        if evaluator.is_async:
            return await evaluator.call_async(request.run, example)
        return await asyncio.to_thread(evaluator.call_sync, request.run, example)
