"""``serve()``: run the evaluator service with uvicorn, refusing unsafe settings before binding."""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from assay.errors import ServiceConfigError, UIConfigError
from assay.evaluation.evaluator import RowEvaluator
from assay.service.app import DEFAULT_MAX_IN_FLIGHT, create_app
from assay.service.guard import DEFAULT_MAX_BODY_BYTES
from assay.ui.bind import bind_listening_socket
from assay.ui.server import check_bind, resolve_token

__all__ = ["ServiceThread", "TOKEN_ENV", "check_settings", "serve"]

TOKEN_ENV = "ASSAY_SERVICE_TOKEN"


def check_settings(host: str, token: str | None) -> str | None:
    """The token to use (given, else ``$ASSAY_SERVICE_TOKEN``); refuses what is unsafe."""
    try:
        resolved = resolve_token(token, env=TOKEN_ENV, server="evaluator service")
        check_bind(host, resolved, env=TOKEN_ENV, exposure="run these evaluators (and code in their sandbox)")
    except UIConfigError as exc:
        raise ServiceConfigError(str(exc)) from None
    return resolved


def serve(
    evaluators: dict[str, RowEvaluator],
    host: str = "127.0.0.1",
    port: int = 8766,
    token: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    on_ready: Callable[[str], Any] | None = None,
) -> None:
    """Serve ``evaluators`` until interrupted; the settings are checked before binding."""
    token = check_settings(host, token)
    app = create_app(evaluators, token=token, max_body_bytes=max_body_bytes, max_in_flight=max_in_flight)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    try:
        sock = bind_listening_socket(host, port, "assay serve-evaluators")
    except UIConfigError as exc:
        raise ServiceConfigError(str(exc)) from None
    shown = f"[{host}]" if ":" in host else host
    names = ", ".join(evaluators)
    bound = sock.getsockname()[1]  # --port 0: the port the system chose
    (on_ready or _announce)(
        f"assay evaluators on http://{shown}:{bound}/ ({len(evaluators)}: {names})"
        + (" (token required)" if token else "")
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


def _announce(message: str) -> None:
    print(message, flush=True)


class ServiceThread:
    """The service on loopback in a daemon thread of this process: for tests and notebooks.

    ``start()`` returns once the port is open; ``stop()`` (or leaving the ``with``) shuts
    it down. Loopback only, without a token unless one is given.
    """

    def __init__(self, evaluators: dict[str, Any], port: int = 8766, token: str | None = None) -> None:
        from assay.service.registry import named_evaluators

        app = create_app(named_evaluators(evaluators, "ServiceThread"), token=token)
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        self.url = f"http://127.0.0.1:{port}"
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="assay-service", daemon=True)

    def start(self, timeout: float = 10.0) -> ServiceThread:
        self._thread.start()
        atexit.register(self.stop)  # a service left running closes its loop cleanly at exit
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise ServiceConfigError(f"the evaluator service at {self.url} did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        atexit.unregister(self.stop)
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> ServiceThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
