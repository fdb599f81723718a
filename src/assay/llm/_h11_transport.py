"""HTTP/1.1 for ``http://`` model servers: h11 (the protocol) over asyncio streams, pooled.

h11 handles framing (Content-Length and chunked bodies) and keep-alive rules; this module
only moves bytes and keeps idle connections per host.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from urllib.parse import urlsplit

import h11

from assay.llm._transport import RawResponse, Transport, TransportFailure, TransportTimeout

MAX_IDLE_PER_HOST = 256
_READ_SIZE = 65536


class _Stale(Exception):
    """A kept-alive connection was closed by the server before it answered."""


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.protocol = h11.Connection(our_role=h11.CLIENT)
        self.reused = False

    @classmethod
    async def open(cls, host: str, port: int) -> _Connection:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer)

    async def exchange(self, request: h11.Request, body: bytes) -> RawResponse:
        data = self.protocol.send(request) or b""
        data += (self.protocol.send(h11.Data(data=body)) or b"") + (
            self.protocol.send(h11.EndOfMessage()) or b""
        )
        self.writer.write(data)
        await self.writer.drain()
        response: h11.Response | None = None
        chunks: list[bytes] = []
        while True:
            event = self.protocol.next_event()
            if event is h11.NEED_DATA:
                received = await self.reader.read(_READ_SIZE)
                if not received and response is None and self.reused:
                    raise _Stale()
                self.protocol.receive_data(received)
            elif isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise TransportFailure("the server closed the connection mid-reply")
        assert response is not None
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1") for name, value in response.headers
        }
        return RawResponse(response.status_code, headers, b"".join(chunks))

    def ready_for_next(self) -> bool:
        """Start the next request cycle if both sides allow it (keep-alive)."""
        if self.protocol.our_state is h11.DONE and self.protocol.their_state is h11.DONE:
            self.protocol.start_next_cycle()
            self.reused = True
            return True
        return False

    def close(self) -> None:
        self.writer.close()


class H11Transport(Transport):
    def __init__(self) -> None:
        self._idle: defaultdict[tuple[str, int], list[_Connection]] = defaultdict(list)

    async def post(self, url: str, content: bytes, headers: dict[str, str], timeout: float) -> RawResponse:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"H11Transport serves http:// URLs only, got {url!r}")
        host, port = parts.hostname, parts.port or 80
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host_header = parts.netloc.rpartition("@")[2]
        request = h11.Request(
            method="POST",
            target=target,
            headers=[
                ("Host", host_header),
                ("Content-Length", str(len(content))),
                *headers.items(),
            ],
        )
        try:
            return await asyncio.wait_for(self._send(host, port, request, content), timeout)
        except asyncio.TimeoutError:
            raise TransportTimeout(f"no reply within {timeout:g} s") from None

    async def _send(self, host: str, port: int, request: h11.Request, body: bytes) -> RawResponse:
        while True:
            connection = self._take(host, port)
            fresh = connection is None
            if connection is None:
                try:
                    connection = await _Connection.open(host, port)
                except OSError as exc:
                    raise TransportFailure(f"cannot connect to {host}:{port} ({exc})") from None
            try:
                response = await connection.exchange(request, body)
            except _Stale:
                connection.close()
                continue  # the server dropped an idle connection: try a fresh one
            except (OSError, h11.ProtocolError, TransportFailure) as exc:
                connection.close()
                if not fresh and isinstance(exc, (ConnectionResetError, BrokenPipeError)):
                    continue
                raise TransportFailure(f"{type(exc).__name__}: {exc}") from None
            except BaseException:  # cancelled or timed out mid-exchange: never reuse it
                connection.close()
                raise
            self._give_back(host, port, connection)
            return response

    def _take(self, host: str, port: int) -> _Connection | None:
        idle = self._idle[(host, port)]
        while idle:
            connection = idle.pop()
            if not connection.reader.at_eof() and not connection.writer.is_closing():
                return connection
            connection.close()
        return None

    def _give_back(self, host: str, port: int, connection: _Connection) -> None:
        idle = self._idle[(host, port)]
        if connection.ready_for_next() and len(idle) < MAX_IDLE_PER_HOST:
            idle.append(connection)
        else:
            connection.close()

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()
