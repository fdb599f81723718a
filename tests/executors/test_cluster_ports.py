"""The loopback cluster's ports are different from one another even when the kernel hands
a released port straight out again (once the head's GCS and Ray Client ports were the
same, and ``ray start`` refused them: every test of the Ray session errored)."""

from __future__ import annotations

import socket
from types import SimpleNamespace
from typing import Any

import pytest

from assay.testing import ray_cluster


class ReusingKernel:
    """Sockets bound to port 0 get the lowest port no open socket holds, as a kernel may."""

    held: set[int] = set()

    def __init__(self) -> None:
        self.port = 0

    def __enter__(self) -> ReusingKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        ReusingKernel.held.discard(self.port)

    def bind(self, address: tuple[str, int]) -> None:
        self.port = min(set(range(40000, 40100)) - ReusingKernel.held)
        ReusingKernel.held.add(self.port)

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)


def test_ports_chosen_together_differ_where_the_kernel_reuses_released_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kernel: Any = SimpleNamespace(socket=ReusingKernel)
    monkeypatch.setattr(ray_cluster, "socket", kernel)
    assert ray_cluster.free_port() == ray_cluster.free_port()  # what taking them one by one risks
    assert ray_cluster.free_ports(3) == [40000, 40001, 40002]
    assert not ReusingKernel.held  # every socket closed


def test_real_ports_chosen_together_differ_and_are_free() -> None:
    ports = ray_cluster.free_ports(20)
    assert len(set(ports)) == 20
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
