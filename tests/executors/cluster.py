"""A real two-node Ray cluster on loopback, for the executor's tests and benchmarks.

Both nodes are ``ray start --block`` processes of this virtual environment, each in a
process group of its own, so stopping the cluster ends exactly the processes it started
(never ``ray stop``, which ends every Ray process on the machine).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

RAY = Path(sys.executable).with_name("ray")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalCluster:
    """``nodes`` node processes with ``cpus`` CPUs each; ``address`` is the head's GCS."""

    nodes: int = 2
    cpus: int = 1
    address: str = ""
    temp_dir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    _processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, timeout: float = 90.0) -> LocalCluster:
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        common = [f"--num-cpus={self.cpus}", "--num-gpus=0", "--block", "--disable-usage-stats"]
        head = [
            "--head",
            "--node-ip-address=127.0.0.1",
            f"--port={port}",
            "--include-dashboard=false",
            f"--temp-dir={self.temp_dir}",
        ]
        self._spawn([str(RAY), "start", *head, *common])
        self._wait_for_nodes(1, timeout)
        for _ in range(self.nodes - 1):
            self._spawn([str(RAY), "start", f"--address={self.address}", "--node-ip-address=127.0.0.1", *common])
        self._wait_for_nodes(self.nodes, timeout)
        return self

    def _spawn(self, command: list[str]) -> None:
        log = open(Path(self.temp_dir) / f"node-{len(self._processes)}.log", "wb")  # noqa: SIM115
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        self._processes.append(
            subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        )

    def _wait_for_nodes(self, count: int, timeout: float) -> None:
        """Ask ``ray status`` until ``count`` nodes are up (a node process that exits fails)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process in self._processes:
                if process.poll() is not None:
                    raise RuntimeError(f"a Ray node exited ({process.returncode}); see {self.temp_dir}")
            status = subprocess.run(
                [str(RAY), "status", f"--address={self.address}"], capture_output=True, text=True
            )
            if status.returncode == 0 and status.stdout.count("node_") >= count:
                return
            time.sleep(1.0)
        raise RuntimeError(f"the Ray cluster did not get {count} nodes in {timeout:.0f}s; see {self.temp_dir}")

    def stop(self) -> None:
        """SIGTERM to each node's group (``--block`` then stops its node), then SIGKILL."""
        for process in reversed(self._processes):
            _signal_group(process.pid, signal.SIGTERM)
        for process in self._processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(process.pid, signal.SIGKILL)
        self._processes.clear()


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass
