"""The two transports under the chat client, against real sockets on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from assay.llm._h11_transport import H11Transport
from assay.llm._http import transport_for
from assay.llm._httpx_transport import HttpxTransport
from assay.llm._transport import TransportFailure, TransportTimeout
from assay.testing import FakeOpenAIServer

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ),
        0,
    )
    return head + await reader.readexactly(length)


@pytest.fixture
async def raw_server() -> AsyncIterator[Callable[[Script], Awaitable[str]]]:
    servers: list[asyncio.base_events.Server] = []

    async def start(script: Script) -> str:
        server = await asyncio.start_server(script, "127.0.0.1", 0)
        servers.append(server)
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


async def test_chunked_replies_are_decoded(raw_server: Callable[[Script], Awaitable[str]]) -> None:
    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nRetry-After: 3\r\n\r\n"
            b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
        )
        await writer.drain()
        writer.close()

    transport = H11Transport()
    response = await transport.post(await raw_server(chunked), b"{}", {}, timeout=5)
    assert (response.status, response.content, response.headers["retry-after"]) == (200, b"hello world", "3")
    await transport.aclose()


async def test_connections_are_kept_alive_and_stale_ones_replaced(
    raw_server: Callable[[Script], Awaitable[str]],
) -> None:
    connections = []

    async def one_reply_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        for _ in range(2):  # answers two requests on a connection, then drops it silently
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
        writer.close()

    transport = H11Transport()
    url = await raw_server(one_reply_then_close)
    for _ in range(5):
        assert (await transport.post(url, b"{}", {"X-Test": "1"}, timeout=5)).content == b"ok"
    assert len(connections) == 3  # reused twice per connection; a dropped one is replaced
    await transport.aclose()


async def test_connection_close_replies_are_not_reused(
    raw_server: Callable[[Script], Awaitable[str]],
) -> None:
    opened = []

    async def close_each(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened.append(1)
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx")
        await writer.drain()
        writer.close()

    transport = H11Transport()
    url = await raw_server(close_each)
    for _ in range(3):
        await transport.post(url, b"", {}, timeout=5)
    assert len(opened) == 3
    await transport.aclose()


async def test_a_reply_cut_short_is_a_failure(raw_server: Callable[[Script], Awaitable[str]]) -> None:
    async def truncated(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
        await writer.drain()
        writer.close()

    with pytest.raises(TransportFailure):
        await H11Transport().post(await raw_server(truncated), b"", {}, timeout=5)


async def test_timeouts_and_refused_connections(raw_server: Callable[[Script], Awaitable[str]]) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # never answers; returns when the client hangs up
        writer.close()

    transport = H11Transport()
    with pytest.raises(TransportTimeout, match="0.2 s"):
        await transport.post(await raw_server(silent), b"", {}, timeout=0.2)
    with pytest.raises(TransportFailure, match="cannot connect"):
        await transport.post("http://127.0.0.1:9/v1", b"", {}, timeout=2)


async def test_httpx_transport_speaks_to_the_same_server(server: FakeOpenAIServer) -> None:
    server.script("via httpx")
    transport = HttpxTransport()
    response = await transport.post(
        f"{server.base_url}/chat/completions",
        b'{"messages": []}',
        {"Content-Type": "application/json"},
        timeout=5,
    )
    assert response.status == 200 and b"via httpx" in response.content
    with pytest.raises(TransportFailure):
        await transport.post("http://127.0.0.1:9/v1", b"", {}, timeout=2)
    await transport.aclose()


async def test_http_urls_use_h11_and_https_urls_httpx() -> None:
    assert isinstance(transport_for("http://localhost:11434/v1/chat/completions"), H11Transport)
    assert isinstance(transport_for("https://api.openai.com/v1/chat/completions"), HttpxTransport)
