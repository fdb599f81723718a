"""A minimal HTTP/1.1 server on asyncio, in a background thread, for test doubles.

Why not ``http.server``: it spends a thread per connection, and a hundred threads fighting
over the GIL cut its throughput to ~60 requests/s, far too slow for a 100-connection judge
benchmark. One event loop serves thousands of requests per second and sleeps for free.
It understands what HTTP clients send to an API: a request line, headers, a
``Content-Length`` body, keep-alive.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self


@dataclass(frozen=True)
class HTTPRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass(frozen=True)
class HTTPResponse:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str = "application/json"

    def encode(self) -> bytes:
        reason = HTTPStatus(self.status).phrase if self.status in HTTPStatus._value2member_map_ else "Status"
        lines = [
            f"HTTP/1.1 {self.status} {reason}",
            f"Content-Type: {self.content_type}",
            f"Content-Length: {len(self.body)}",
        ]
        lines += [f"{name}: {value}" for name, value in self.headers]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + self.body


Responder = Callable[[HTTPRequest], Awaitable[HTTPResponse]]


class LoopbackHTTPServer:
    def __init__(self, respond: Responder, port: int = 0) -> None:
        self._respond = respond
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    def start(self) -> None:
        # The loop runs in its own thread from the start: the caller may have a loop running.
        loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="assay-loopback-http", daemon=True)
        self._thread.start()
        self._loop = loop
        listening = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._connection, "127.0.0.1", self._port, backlog=1024), loop
        )
        try:
            self._server = listening.result(timeout=10)
        except BaseException:
            self.stop()
            raise
        self.port = int(self._server.sockets[0].getsockname()[1])

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._close(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()
        self._loop = self._thread = None

    async def _close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for writer in list(self._writers):  # kept-alive connections end with the server
            writer.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:  # replies still sleeping out their latency
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                response = await self._respond(request)
                writer.write(response.encode())
                await writer.drain()
                if request.headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the client went away or spoke nonsense: drop the connection
        except asyncio.CancelledError:
            pass  # the server is stopping; end quietly (a cancelled connection task is logged)
        finally:
            self._writers.discard(writer)
            writer.close()


async def _read_request(reader: asyncio.StreamReader) -> HTTPRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # closed between requests
    request_line, *lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise ValueError("chunked request bodies are not supported by this test server")
    length = int(headers.get("content-length") or 0)
    body = await reader.readexactly(length) if length else b""
    return HTTPRequest(method=method, path=path, headers=headers, body=body)


class LoopbackDouble:
    """What every API double shares: a server started once, stopped once, a context manager.

    A subclass answers requests in ``_respond`` and names itself in ``API``.
    """

    API = "fake"

    def __init__(self, port: int = 0) -> None:
        self._port = port
        self._http: LoopbackHTTPServer | None = None

    async def _respond(self, http: HTTPRequest) -> HTTPResponse:
        raise NotImplementedError

    def start(self) -> Self:
        if self._http is None:
            http = LoopbackHTTPServer(self._respond, self._port)
            http.start()
            self._http = http
        return self

    def stop(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            http.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._http is None:
            raise RuntimeError(f"the {self.API} server is not running; call start() first")
        return self._http.port
