"""Binding a server's port before uvicorn starts, so that a port already in use is an
error naming the port and what to do, not uvicorn's raw ``[Errno 98]`` after a line
that announced the server."""

from __future__ import annotations

import errno
import socket

from assay.errors import PortInUseError, UIConfigError

__all__ = ["bind_listening_socket"]

_BACKLOG = 2048  # uvicorn's default
_NEXT_PORTS = 20  # how far past a busy port to look for a free one to suggest


def bind_listening_socket(host: str, port: int, command: str) -> socket.socket:
    """A socket bound to ``host:port`` (``port`` 0: any free one), for uvicorn's
    ``Server.run(sockets=...)``. ``command`` (``assay ui``) is named in the error."""
    try:
        sock = _bound(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(_busy_message(host, port, command)) from None
        if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
            raise UIConfigError(
                f"{command} cannot listen on {host!r}: it is not an address of this machine "
                f"({exc.strerror}); use --host 127.0.0.1"
            ) from None
        if exc.errno == errno.EACCES:
            raise UIConfigError(
                f"{command} may not listen on port {port} ({exc.strerror}): ports below 1024 "
                "need privileges; pass --port with a number from 1024 up"
            ) from None
        raise
    sock.listen(_BACKLOG)  # from here a client waits in the queue until uvicorn accepts
    return sock


def _bound(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # as uvicorn chooses
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _busy_message(host: str, port: int, command: str) -> str:
    free = _free_port_after(host, port)
    other = f"--port {free}" if free is not None else "another --port"
    return (
        f"port {port} on {host} is already in use, by another program or an earlier "
        f"`{command}` still running. Stop it (`ss -ltnp 'sport = :{port}'` names it), or "
        f"start on another port: {other} (--port 0 picks any free one)"
    )


def _free_port_after(host: str, port: int) -> int | None:
    for candidate in range(port + 1, min(port + 1 + _NEXT_PORTS, 65536)):
        try:
            _bound(host, candidate).close()
        except OSError:
            continue
        return candidate
    return None
