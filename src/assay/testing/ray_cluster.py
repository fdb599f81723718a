"""A real Ray cluster on loopback with one or more node processes, for trying the Ray
executor on one machine (its tests and benchmarks use it)::

    cluster = LocalCluster(nodes=2, cpus=1).start()
    try:
        evaluate(..., executor=RayExecutor(address=cluster.address))
    finally:
        cluster.stop()

The nodes are ``ray start --block`` processes of this virtual environment, each in a
process group of its own, so stopping the cluster ends exactly the processes it started
(never ``ray stop``, which ends every Ray process on the machine). A watchdog process
ends them too if the process that started the cluster dies without stopping it (a
SIGKILLed test run would otherwise leave a cluster behind).

Ray's servers listen on every interface (Ray 2.60 has no setting for loopback alone), so
the cluster requires a token of its own: written in its private temporary folder, given
to its nodes, and set in this process's environment (``RAY_AUTH_MODE``,
``RAY_AUTH_TOKEN_PATH``) while the cluster runs, so that this process connects as its
driver. A token the user has in ``~/.ray/auth_token`` is neither used nor changed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LocalCluster", "free_port", "free_ports"]


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` different ports, free now. Their sockets stay bound until all are chosen:
    the kernel may hand a port it has just released straight out again, and two ports
    taken one after the other were once the same (the head's GCS and Ray Client ports,
    which ``ray start`` refuses)."""
    with contextlib.ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]


@dataclass
class LocalCluster:
    """``nodes`` node processes with ``cpus`` CPUs each; ``address`` is the head's GCS.
    With ``ray_client=True`` the head also serves Ray Client, at ``client_address``
    (``ray://127.0.0.1:PORT``; needs ``ray[client]``)."""

    nodes: int = 2
    cpus: int = 1
    ray_client: bool = False
    address: str = ""
    client_address: str = ""
    temp_dir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    _groups: list[int] = field(default_factory=list)  # a process group per node
    _watchdog: subprocess.Popen[bytes] | None = None
    _environ_before: dict[str, str | None] = field(default_factory=dict)

    @property
    def auth_env(self) -> dict[str, str]:
        """What a process needs in its environment to connect to this cluster."""
        return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(Path(self.temp_dir) / "auth_token")}

    def start(self) -> LocalCluster:
        """Start the head, then the other nodes; ``ray start`` returns once its node is up."""
        port, client_port = free_ports(2)
        self.address = f"127.0.0.1:{port}"
        common = [f"--num-cpus={self.cpus}", "--num-gpus=0", "--disable-usage-stats"]
        head = [
            "--head",
            "--node-ip-address=127.0.0.1",
            f"--port={port}",
            "--include-dashboard=false",
            f"--temp-dir={self.temp_dir}",
        ]
        if self.ray_client:
            self.client_address = f"ray://127.0.0.1:{client_port}"
            head.append(f"--ray-client-server-port={client_port}")
        ray = [*self._ray_command(), "start"]
        self._write_token()
        self._watchdog = _start_watchdog(self.temp_dir)
        try:
            self._start_node([*ray, *head, *common])
            for _ in range(self.nodes - 1):
                self._start_node([*ray, f"--address={self.address}", "--node-ip-address=127.0.0.1", *common])
        except BaseException:
            self.stop(keep_files=True)  # the error names a node's log there
            raise
        return self

    def _write_token(self) -> None:
        """A fresh token, readable by us alone, and this process pointed at it."""
        path = Path(self.auth_env["RAY_AUTH_TOKEN_PATH"])
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as token:
            token.write(secrets.token_hex(32))
        for name, value in self.auth_env.items():
            self._environ_before.setdefault(name, os.environ.get(name))
            os.environ[name] = value
        _reload_ray_auth()

    def _restore_environ(self) -> None:
        for name, value in self._environ_before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if self._environ_before:
            self._environ_before.clear()
            _reload_ray_auth()

    def _ray_command(self) -> list[str]:
        """The ``ray`` command of this environment. Ray's head starts its client server
        through a shell with the interpreter's path unquoted, so an environment whose path
        holds a space is reached through a link without one."""
        python = Path(sys.executable)
        if " " in sys.prefix and python.is_relative_to(sys.prefix):
            link = Path(self.temp_dir) / "env"
            if not link.exists():
                link.symlink_to(sys.prefix, target_is_directory=True)
            python = link / python.relative_to(sys.prefix)
        return [str(python), "-m", "ray.scripts.scripts"]

    def _start_node(self, command: list[str]) -> None:
        """``ray start`` in a new session: the node's processes (the GCS, the raylet, and the
        workers it starts) stay in that process group after ``ray start`` returns."""
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **self.auth_env}
        log_path = Path(self.temp_dir) / f"node-{len(self._groups)}.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env
            )
        self._groups.append(process.pid)
        _tell_watchdog(self._watchdog, f"{process.pid}\n")
        if process.wait() != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}): see {log_path}")

    def stop(self, *, keep_files: bool = False) -> None:
        """SIGKILL to each node's process group; returns once they are gone, with
        ``temp_dir`` (Ray's sessions and logs) removed unless ``keep_files``.

        Not SIGTERM first: Ray's GCS server and autoscaler monitor ignore it and its raylet
        spends seconds shutting down, so a grace period only delays the SIGKILL that ends
        them anyway (Ray's own test clusters kill their nodes the same way)."""
        for group in reversed(self._groups):
            _signal_group(group, signal.SIGKILL)
        _wait_gone(self._groups)
        self._groups.clear()
        if not keep_files:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        self._restore_environ()
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None:
            _tell_watchdog(watchdog, "stopped\n")
            if watchdog.stdin is not None:
                watchdog.stdin.close()
            watchdog.wait()


# Reads the nodes' process groups, one a line, from the owner's pipe. End of file without
# "stopped" means the owner died: the groups are ended the way ``stop`` ends them, and the
# cluster's folder (argv[1]) removed.
_WATCHDOG = """
import os, shutil, signal, sys, time
groups = []
for line in sys.stdin:
    if line.strip() == "stopped":
        sys.exit(0)
    groups.append(int(line))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass
for _ in range(50):  # a killed process may finish the write it was in
    shutil.rmtree(sys.argv[1], ignore_errors=True)
    if not os.path.exists(sys.argv[1]):
        break
    time.sleep(0.1)
"""


def _reload_ray_auth() -> None:
    """Ray reads its authentication settings once, when it is imported: in a process that
    has imported it already, have them read again (as Ray's own tests do)."""
    raylet = sys.modules.get("ray._raylet")
    if raylet is None:
        return
    try:
        raylet.Config.initialize("")
        raylet.AuthenticationTokenLoader.instance().reset_cache()
    except Exception:  # noqa: BLE001 - another Ray: connecting will say what is wrong
        pass


def _start_watchdog(temp_dir: str) -> subprocess.Popen[bytes]:
    """In a session of its own, so a signal to the owner's process group spares it."""
    return subprocess.Popen(
        [sys.executable, "-I", "-c", _WATCHDOG, temp_dir], stdin=subprocess.PIPE, start_new_session=True
    )


def _tell_watchdog(watchdog: subprocess.Popen[bytes] | None, line: str) -> None:
    if watchdog is not None and watchdog.stdin is not None:
        watchdog.stdin.write(line.encode())
        watchdog.stdin.flush()


def _wait_gone(groups: list[int], limit: float = 30.0) -> None:
    """Until no process of ``groups`` runs: a killed process takes a moment to die. Its
    zombie is not waited for (the nodes' parent is init, which reaps it in its own time);
    after ``limit`` seconds the rest are left to the kernel."""
    deadline = time.monotonic() + limit
    while _running(groups) and time.monotonic() < deadline:
        time.sleep(0.05)


def _running(groups: list[int]) -> bool:
    """Whether a process of ``groups`` is alive and not a zombie (read from /proc; where
    there is none, any process of the groups counts)."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return any(_group_alive(group) for group in groups)
    wanted = {str(group) for group in groups}
    for stat in proc.glob("[0-9]*/stat"):
        try:
            # after the command's closing parenthesis: state, ppid, pgrp, ...
            state, _, pgrp = stat.read_text().rpartition(")")[2].split()[:3]
        except (OSError, ValueError):
            continue  # ended while we looked
        if pgrp in wanted and state != "Z":
            return True
    return False


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass
