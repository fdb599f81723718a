"""Run the fake OpenAI server as its own process (for load tests and non-Python clients).

    python -m assay.testing                    # a valid answer to any judge's schema
    python -m assay.testing --latency 0.1 --handler mypackage.judges:reply
    python -m assay.testing --reply '{"reasoning": "ok", "value": "Y"}'

It listens on 127.0.0.1 only, prints its base URL, and serves until interrupted.
``GET /_assay/stats`` returns request counts.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import threading
from typing import Any

from assay.testing.openai_server import FakeOpenAIServer


def load_handler(spec: str) -> Any:
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise SystemExit(f"--handler must look like 'package.module:function', got {spec!r}")
    return getattr(importlib.import_module(module), attribute)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m assay.testing", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    parser.add_argument("--handler", help="module:function computing replies from requests")
    parser.add_argument("--reply", help="one fixed reply for every chat request")
    parser.add_argument("--model", default="fake-judge")
    parser.add_argument("--reject-response-format", action="store_true")
    args = parser.parse_args(argv)
    handler = load_handler(args.handler) if args.handler else None
    if handler is None and args.reply is not None:
        fixed = args.reply
        handler = lambda request: fixed  # noqa: E731 - a one-line constant reply
    server = FakeOpenAIServer(
        handler=handler,
        latency=args.latency,
        model=args.model,
        port=args.port,
        reject_response_format=args.reject_response_format,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(f"fake OpenAI server listening on {server.base_url}", flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
