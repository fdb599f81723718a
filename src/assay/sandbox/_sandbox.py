"""One running sandbox, seen from the trusted parent: start it, ask its zygote to spawn
children onto our pipes, reset it between jobs, kill it."""

from __future__ import annotations

import itertools
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence

from assay.sandbox._launch import BASE_ENV, LaunchContext, LaunchPlan, Runtime
from assay.sandbox._uids import UidLease, lease_uid
from assay.sandbox.errors import SandboxError, SandboxStartError

START_SECONDS = 30.0
RESET_SECONDS = 10.0
MESSAGE_LIMIT = 1 << 20
_tokens = itertools.count(1)


class Sandbox:
    """Not thread-safe: a pool leases each sandbox to one job at a time."""

    def __init__(self, backend: Any, settings: "SandboxSettings") -> None:
        self.backend = backend
        self.settings = settings
        self.exits: dict[str, dict[str, Any]] = {}
        self.spawn_failures: dict[str, str] = {}
        self.dead = False
        self.death_note = ""
        self.dirty = False
        self.info: dict[str, Any] = {}
        self._uid: Optional[UidLease] = None
        self._folders: list[str] = []
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.control: Optional[socket.socket] = None
        self.plan: Optional[LaunchPlan] = None

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            context = self._context(theirs.fileno())
            self.plan = self.backend.plan(context)
            self.process = _launch(self.plan, theirs.fileno())
        except BaseException:
            ours.close()
            self._release()
            raise
        finally:
            theirs.close()
        self.control = ours
        try:
            self.info = self._await_ready()
        except BaseException:
            self.kill()
            raise

    def _context(self, control_fd: int) -> LaunchContext:
        settings = self.settings
        uid: Optional[int] = None
        if not settings.user_namespace and os.geteuid() == 0:
            self._uid = lease_uid(settings.uid_base)
            uid = self._uid.uid
        workroot = scratch = None
        if self.backend.name == "rlimit":
            workroot = self._folder("assay-sandbox-work-", 0o711 if uid is not None else 0o700)
        if self.backend.name == "unshare":
            scratch = self._folder("assay-sandbox-root-", 0o755)
        return LaunchContext(
            runtime=settings.runtime, control_fd=control_fd,
            workdir_bytes=settings.workdir_bytes, extra_ro_paths=settings.extra_ro_paths,
            sandbox_uid=uid, user_namespace=settings.user_namespace,
            host_workroot=workroot, scratch=scratch,
        )

    def _folder(self, prefix: str, mode: int) -> str:
        folder = tempfile.mkdtemp(prefix=prefix)
        os.chmod(folder, mode)
        self._folders.append(folder)
        return folder

    def _await_ready(self) -> dict[str, Any]:
        message = self.receive(time.monotonic() + START_SECONDS)
        if message is None or message.get("event") != "ready":
            raise SandboxStartError(
                f"the {self.backend.name} sandbox did not start: {self._stderr_tail()}"
            )
        return message

    def _stderr_tail(self) -> str:
        assert self.process is not None and self.process.stderr is not None
        if self.process.poll() is None:
            self.process.kill()
        try:
            text = self.process.stderr.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            text = ""
        return text[-2000:] or f"exit status {self.process.wait()}"

    def kill(self) -> None:
        """Kill the whole sandbox: every process in it dies with its namespace (or, for the
        rlimit backend as root, with its dedicated uid)."""
        self.dead = True
        if self.backend.name == "rlimit" and self._uid is None and self.process is not None:
            from assay.sandbox._reaper import kill_descendants_of

            kill_descendants_of(self.process.pid)  # before the zygote dies and they orphan
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.process.kill()
        if self.process is not None:
            self.process.wait()
            if self.process.stderr is not None:
                self.process.stderr.close()
        if self.backend.name == "rlimit":
            self._kill_rlimit_leftovers()
        if self.control is not None:
            self.control.close()
            self.control = None
        self._release()

    def _kill_rlimit_leftovers(self) -> None:
        from assay.sandbox._reaper import kill_uid

        if self._uid is not None:
            kill_uid(self._uid.uid)

    def _release(self) -> None:
        if self._uid is not None:
            self._uid.release()
            self._uid = None
        for folder in self._folders:
            shutil.rmtree(folder, ignore_errors=True)
        self._folders.clear()

    def shutdown(self) -> None:
        if not self.dead and self.control is not None:
            try:
                self.send({"op": "shutdown"})
                if self.process is not None:
                    self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    # -- messages ------------------------------------------------------------------------
    def send(self, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
        if self.control is None or self.dead:
            raise SandboxError(f"the {self.backend.name} sandbox is not running{self.death_note}")
        try:
            socket.send_fds(self.control, [json.dumps(message).encode()], list(fds))
        except OSError as exc:
            self._died()
            raise SandboxError(f"the {self.backend.name} sandbox died{self.death_note}") from exc

    def _died(self) -> None:
        """The zygote is gone (it never runs job code, so this is a bug or an outside
        kill): keep what it said on stderr for the error message."""
        if self.dead:
            return
        self.dead = True
        process = self.process
        if process is not None and process.stderr is not None:
            os.set_blocking(process.stderr.fileno(), False)
            try:
                tail = (process.stderr.read() or b"")[-2000:].decode(errors="replace").strip()
            except (OSError, ValueError):
                tail = ""
            if tail:
                self.death_note = f": {tail}"

    def receive(self, deadline: float) -> Optional[dict[str, Any]]:
        """The next message (blocking until ``deadline``), or None if the sandbox died."""
        assert self.control is not None
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([self.control], [], [], remaining)[0]:
            return None
        return self.read_message()

    def read_message(self) -> Optional[dict[str, Any]]:
        if self.control is None:
            return None
        try:
            data = self.control.recv(MESSAGE_LIMIT)
        except OSError:
            data = b""
        if not data:
            self._died()
            return None
        message: dict[str, Any] = json.loads(data)
        if message.get("event") == "exited":
            self.exits[message["token"]] = message["status"]
        elif message.get("reply") == "spawn_failed":
            self.spawn_failures[message["token"]] = message.get("message", "")
        return message

    def spawn(self, role: str, fds: list[int], limits: dict[str, Any],
              argv: Optional[list[str]] = None) -> str:
        token = f"t{next(_tokens)}"
        targets = list(range(1, len(fds) + 1))
        self.dirty = True
        self.send({"op": "spawn", "token": token, "role": role, "argv": argv or [],
                   "fd_targets": targets, "limits": limits}, fds)
        return token

    def reset(self) -> dict[str, Any]:
        """Kill everything the job left, empty /work; report how its processes ended."""
        if self.dead:
            return {"exits": dict(self.exits), "survivors": 0}
        self.send({"op": "reset"})
        deadline = time.monotonic() + RESET_SECONDS
        while True:
            message = self.receive(deadline)
            if message is None:
                self.kill()
                raise SandboxError(
                    f"the {self.backend.name} sandbox did not finish its reset{self.death_note}")
            if message.get("reply") == "reset":
                break
        exits = {**self.exits, **message.get("exits", {})}
        self.exits.clear()
        self.dirty = False
        if message.get("survivors"):
            self.kill()
        return {"exits": exits, "survivors": message.get("survivors", 0)}

    @property
    def harness_root(self) -> str:
        assert self.plan is not None
        return self.plan.harness_root


# bwrap --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started it
# ends, so every sandbox is started from one thread that lives as long as we do.
_launcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-sandbox-launcher")


def _launch(plan: LaunchPlan, control_fd: int) -> "subprocess.Popen[bytes]":
    def start() -> "subprocess.Popen[bytes]":
        return subprocess.Popen(
            plan.argv, pass_fds=[control_fd], env=dict(BASE_ENV),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True, cwd="/", **plan.popen_kwargs,
        )

    return _launcher.submit(start).result()


class SandboxSettings:
    """What a pool decided once: the runtime, the user mode and the folder sizes."""

    def __init__(self, runtime: Runtime, user_namespace: bool, workdir_bytes: int,
                 extra_ro_paths: tuple[str, ...], uid_base: int) -> None:
        self.runtime = runtime
        self.user_namespace = user_namespace
        self.workdir_bytes = workdir_bytes
        self.extra_ro_paths = extra_ro_paths
        self.uid_base = uid_base
