"""One running sandbox, seen from the trusted parent: start it, ask its zygote to spawn
children onto our pipes, reset it between jobs, kill it."""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from assay.errors import SandboxError, SandboxStartError
from assay.sandbox import _procfs as procfs
from assay.sandbox._cgroup import SandboxCgroup, wrap
from assay.sandbox._io import ready
from assay.sandbox._launch import LaunchContext, LaunchPlan, Runtime
from assay.sandbox._launcher import launch
from assay.sandbox._uids import UidLease, lease_uid
from assay.sandbox.harness.tree import remove_tree

START_SECONDS = 30.0
RESET_SECONDS = 3.0  # a sandbox whose cleanup takes longer is discarded and replaced
KILL_WAIT_SECONDS = 10.0
MESSAGE_LIMIT = 1 << 20
_tokens = itertools.count(1)


class Sandbox:
    """Not thread-safe: a pool leases each sandbox to one job at a time."""

    def __init__(
        self, backend: Any, settings: SandboxSettings, on_start: Callable[[Sandbox], None] | None = None
    ) -> None:
        self.backend = backend
        self.on_start = on_start
        self.settings = settings
        self.exits: dict[str, dict[str, Any]] = {}
        self.dead = False
        self._killed = False
        self.death_note = ""
        self.dirty = False
        self.reset_pending = False
        self.resident: Any = None  # a resident checker (assay.sandbox._resident)
        self.info: dict[str, Any] = {}
        self._uid: UidLease | None = None
        self._folders: list[str] = []
        self.process: subprocess.Popen[bytes] | None = None
        self.control: socket.socket | None = None
        self.plan: LaunchPlan | None = None
        self.zygote_pid = -1
        self.leftovers_at_kill: list[int] = []
        self._zygote_pidfd: int | None = None
        self.pid_namespace: str | None = None
        self.uid: int | None = None
        self.cgroup: SandboxCgroup | None = None
        self.spare: int | None = None  # the zygote's pre-forked child (its pid in the sandbox)

    # -- life cycle ----------------------------------------------------------------------
    def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            if self.settings.memory_cgroup:
                self.cgroup = SandboxCgroup.create(self.settings.cpu_quota)
            context = self._context(theirs.fileno())
            self.plan = self.backend.plan(context)
            argv = self.plan.argv if self.cgroup is None else wrap(self.plan.argv, self.cgroup)
            self.process = launch(self.plan, theirs.fileno(), argv)
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
        try:
            self._remember_identity()
            if self.cgroup is not None:
                self._shield_from_oom()
                self.cgroup.settle()
            if self.on_start is not None:
                self.on_start(self)
        except BaseException:
            self.kill()
            raise

    def _remember_identity(self) -> None:
        """What marks this sandbox's processes on the host, for stray_processes()."""
        assert self.process is not None
        zygote = self.process.pid
        if self.backend.name != "rlimit":
            zygote = next(iter(procfs.children_of(self.process.pid)), zygote)
            self.pid_namespace = procfs.pid_namespace(zygote)
            try:
                self._zygote_pidfd = os.pidfd_open(zygote)
            except OSError:
                self._zygote_pidfd = None
        self.zygote_pid = zygote
        self.uid = self._uid.uid if self._uid is not None else None

    def _shield_from_oom(self) -> None:
        """When a job fills the cgroup, the kernel kills the job, never the zygote (or
        its launcher); children reset their own score before they run job code."""
        assert self.process is not None
        for pid in {self.process.pid, self.zygote_pid}:
            try:
                with open(f"/proc/{pid}/oom_score_adj", "w") as handle:
                    handle.write("-1000")
            except OSError:
                pass

    def stray_processes(self) -> list[int]:
        """Host pids of processes this sandbox holds besides its zygote (and launcher).
        Between jobs there are none; after the sandbox is killed there are none.

        A killed sandbox was scanned as it died (before its uid lease was released; a PID
        namespace's number may be reused once it is gone), so only those pids are checked.
        """
        if self.dead:
            return [pid for pid in self.leftovers_at_kill if procfs.alive(pid)]
        return self._scan({self.zygote_pid, self.process.pid if self.process else -1})

    def _scan(self, own: set[int], by_namespace: bool = True) -> list[int]:
        found = []
        for pid in procfs.all_pids():
            if pid in own:
                continue
            try:
                if procfs.is_zombie(pid):
                    continue  # exited, holds nothing but its pid until reaped
                by_uid = self.uid is not None and os.stat(f"/proc/{pid}").st_uid == self.uid
                by_ns = (
                    by_namespace
                    and self.pid_namespace is not None
                    and procfs.pid_namespace(pid) == self.pid_namespace
                )
            except OSError:
                continue
            if (by_uid or by_ns) and not self._is_spare(pid):
                found.append(pid)
        return found

    def _is_spare(self, pid: int) -> bool:
        """The zygote's spare, waiting for the next job: it never ran job code."""
        if self.spare is None:
            return False
        try:
            with open(f"/proc/{pid}/status") as status:
                line = next(line for line in status if line.startswith("NSpid:"))
        except (OSError, StopIteration):
            return False
        return int(line.split()[-1]) == self.spare  # its pid as the sandbox sees it

    def _context(self, control_fd: int) -> LaunchContext:
        settings = self.settings
        uid: int | None = None
        if not settings.user_namespace and os.geteuid() == 0:
            self._uid = lease_uid(settings.uid_base)
            uid = self._uid.uid
        workroot = scratch = None
        if self.backend.name == "rlimit":
            workroot = self._folder("assay-sandbox-work-", 0o711 if uid is not None else 0o700)
        if self.backend.name == "unshare":
            scratch = self._folder("assay-sandbox-root-", 0o755)
        return LaunchContext(
            runtime=settings.runtime,
            control_fd=control_fd,
            workdir_bytes=settings.workdir_bytes,
            extra_ro_paths=settings.extra_ro_paths,
            sandbox_uid=uid,
            user_namespace=settings.user_namespace,
            host_workroot=workroot,
            scratch=scratch,
            oom_protected=self.cgroup is not None,
        )

    def _folder(self, prefix: str, mode: int) -> str:
        folder = tempfile.mkdtemp(prefix=prefix)
        os.chmod(folder, mode)
        self._folders.append(folder)
        return folder

    def _await_ready(self) -> dict[str, Any]:
        message = self.receive(time.monotonic() + START_SECONDS)
        if message is None or message.get("event") != "ready":
            raise SandboxStartError(f"the {self.backend.name} sandbox did not start: {self._stderr_tail()}")
        self.spare = message.get("spare")
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
        if self._killed:
            return
        self._killed = self.dead = True
        self._free_cpu()
        self.spare = None
        self.forget_resident()
        if self.backend.name == "rlimit" and self._uid is None and self.process is not None:
            from assay.sandbox._reaper import kill_descendants_of

            kill_descendants_of(self.process.pid)  # before the zygote dies and they orphan
        gone = self._await_namespace_gone()  # first, so its launcher (not init) reaps it
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
        # the kernel ends a PID namespace's init only once the namespace is empty; a
        # dedicated uid is checked while its lease is still ours
        self.leftovers_at_kill = [] if gone else [self.zygote_pid]
        if self.uid is not None:
            self.leftovers_at_kill += self._scan(set(), by_namespace=False)
        if self.control is not None:
            self.control.close()
            self.control = None
        self._release()

    def forget_resident(self) -> None:
        if self.resident is not None:
            self.resident.close()
            self.resident = None

    def zygote_exited(self) -> bool:
        """Whether the zygote has ended (the sandbox is then dead), asked of the kernel:
        a kill from outside reaches the control socket only when we next use it."""
        if self.dead:
            return True
        if self._zygote_pidfd is not None:
            ended = ready(self._zygote_pidfd, 0)
        else:
            ended = self.zygote_pid > 0 and not procfs.alive(self.zygote_pid)
        if ended:
            self._died()
        return ended

    def _await_namespace_gone(self) -> bool:
        """Kill the namespace's init (our zygote) and wait until it has exited: the kernel
        exits a PID namespace's init only after every other process in it is gone."""
        fd, self._zygote_pidfd = self._zygote_pidfd, None
        if fd is None:
            return True
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            pass
        exited = ready(fd, KILL_WAIT_SECONDS)
        os.close(fd)
        return exited

    def _kill_rlimit_leftovers(self) -> None:
        from assay.sandbox._reaper import kill_uid

        if self._uid is not None:
            kill_uid(self._uid.uid)

    def _release(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self._uid is not None:
            self._uid.release()
            self._uid = None
        for folder in self._folders:
            remove_tree(folder)  # any depth a job made: never a RecursionError here
        self._folders.clear()

    def shutdown(self) -> None:
        self._free_cpu()
        if not self.dead and self.control is not None:
            try:
                self.send({"op": "shutdown"})
                if self.process is not None:
                    self.process.wait(timeout=5)
            except (SandboxError, OSError, subprocess.TimeoutExpired):
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

    def receive(self, deadline: float) -> dict[str, Any] | None:
        """The next message (blocking until ``deadline``), or None if the sandbox died."""
        assert self.control is not None
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not ready(self.control, remaining):
            return None
        return self.read_message()

    def read_message(self) -> dict[str, Any] | None:
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
        return message

    def spawn(
        self,
        role: str,
        fds: list[int],
        limits: dict[str, Any],
        argv: list[str] | None = None,
        watch: bool = False,
        targets: Sequence[int] | None = None,
    ) -> str:
        """Start a child on ``fds`` (its descriptors 1, 2, 3..., or ``targets``; 0 is
        /dev/null unless named). With ``watch`` its exit is reported to ``exits``;
        otherwise ask with ``watch()`` when it matters."""
        self.finish_reset()
        limits = self._memory_limit(role, dict(limits))
        token = f"t{next(_tokens)}"
        targets = list(targets) if targets is not None else list(range(1, len(fds) + 1))
        self.dirty = True
        self.send(
            {
                "op": "spawn",
                "token": token,
                "role": role,
                "argv": argv or [],
                "fd_targets": targets,
                "limits": limits,
                "watch": watch,
            },
            fds,
        )
        return token

    def _memory_limit(self, role: str, limits: dict[str, Any]) -> dict[str, Any]:
        """The cgroup's limits for this job; without one, an address-space limit for
        Python (V8 reserves far more address space than it uses, so JavaScript keeps
        its data-segment limit and its own heap limit)."""
        if self.cgroup is not None:
            try:
                self.cgroup.apply(limits.get("memory_bytes"), limits.get("max_processes"))
                self.cgroup.hold_cpu(True)
            except OSError as exc:
                raise SandboxError(f"the sandbox's cgroup refused its limits: {exc}") from exc
        elif role.startswith("py_") and limits.get("memory_bytes"):
            limits["address_space_bytes"] = limits["memory_bytes"]
        return limits

    def cpu_ns(self) -> int | None:
        """The kernel's count of the CPU time this sandbox's processes used (ns), or None
        without a cgroup to count it."""
        return self.cgroup.cpu_ns() if self.cgroup is not None else None

    @property
    def memory_limit(self) -> str:
        if self.cgroup is not None:
            return self.cgroup.describe()
        return "RLIMIT_AS (Python), RLIMIT_DATA and V8's heap limit (JavaScript)"

    def watch(self, token: str) -> None:
        if not self.dead:
            self.send({"op": "watch", "token": token})

    def sweep(self) -> dict[str, Any]:
        """Kill every process the job left, keeping its files (a program built once runs
        again); a sandbox whose zygote does not answer in time is killed."""
        self.finish_reset()
        self._free_cpu()
        self.send({"op": "sweep"})
        deadline = time.monotonic() + RESET_SECONDS
        while True:
            message = self.receive(deadline)
            if message is None:
                self.kill()
                raise SandboxError(
                    f"the {self.backend.name} sandbox did not finish its sweep{self.death_note}"
                )
            if message.get("reply") == "sweep":
                break
        self.spare = message.get("spare")
        exits = {**self.exits, **message.get("exits", {})}
        self.exits.clear()
        if message.get("survivors"):
            self.kill()
            raise SandboxError(f"processes of the {self.backend.name} sandbox survived a sweep")
        return {"exits": exits}

    def reset(self) -> dict[str, Any]:
        """Kill everything the job left, empty /work; report how its processes ended."""
        self.begin_reset()
        return self.finish_reset()

    def begin_reset(self, keep_build: bool = False) -> None:
        """Ask for the reset without waiting: the zygote cleans up while we go on; the
        next spawn (or lease) waits for it to finish. A resident checker dies with it.
        ``keep_build``: the job goes on in a fresh process, which may reuse its build."""
        self.forget_resident()
        if self.dead or self.reset_pending:
            return
        self._free_cpu()
        self.send({"op": "reset", "keep_build": keep_build})
        self.reset_pending = True
        self.dirty = False

    def _free_cpu(self) -> None:
        """The job is over: the zygote's cleanup runs without its CPU quota (see
        ``SandboxCgroup.hold_cpu``); the next spawn sets it again."""
        if self.cgroup is not None:
            try:
                self.cgroup.hold_cpu(False)
            except OSError:
                pass  # a kill still ends the job, only more slowly

    def finish_reset(self) -> dict[str, Any]:
        if not self.reset_pending or self.dead:
            self.reset_pending = False
            exits, self.exits = dict(self.exits), {}
            return {"exits": exits, "survivors": 0}
        deadline = time.monotonic() + RESET_SECONDS
        while True:
            message = self.receive(deadline)
            if message is None:
                self.kill()
                raise SandboxError(
                    f"the {self.backend.name} sandbox did not finish its reset{self.death_note}"
                )
            if message.get("reply") == "reset":
                break
        self.reset_pending = False
        self.spare = message.get("spare")
        exits = {**self.exits, **message.get("exits", {})}
        self.exits.clear()
        if message.get("survivors"):
            self.kill()  # never happens with a PID namespace; never reuse if it does
        return {"exits": exits, "survivors": message.get("survivors", 0)}

    @property
    def harness_root(self) -> str:
        assert self.plan is not None
        return self.plan.harness_root


class SandboxSettings:
    """What a pool decided once: the runtime, the user mode and the folder sizes."""

    def __init__(
        self,
        runtime: Runtime,
        user_namespace: bool,
        workdir_bytes: int,
        extra_ro_paths: tuple[str, ...],
        uid_base: int,
        memory_cgroup: bool = False,
        cpu_quota: float | None = None,
    ) -> None:
        self.memory_cgroup = memory_cgroup
        self.cpu_quota = cpu_quota
        self.runtime = runtime
        self.user_namespace = user_namespace
        self.workdir_bytes = workdir_bytes
        self.extra_ro_paths = extra_ro_paths
        self.uid_base = uid_base
