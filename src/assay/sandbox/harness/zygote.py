"""The warm process factory inside each sandbox.

It never sees a job's data: the trusted parent sends it pipe ends over a Unix socket
and it forks a fresh child onto them. Between jobs it kills every process the job left
behind and empties the working folder. Inside a PID namespace it runs as PID 1, which
processes of the namespace cannot signal or trace.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import time
import traceback
from typing import Any

from . import frames, kept_build, landlock, proc, py_roles
from .cleanup import kill_all, kill_all_and_scrub, place_descriptors, scrub
from .tree import remove_tree

CONTROL_LIMIT = 1 << 20
KILL_SECONDS = 5.0


class Zygote:
    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        self.control = socket.socket(fileno=options["control_fd"])
        self.workroot: str = options["workroot"]
        self.uid: int | None = options.get("drop_uid")
        self.gid: int | None = options.get("drop_gid")
        self.watched: dict[int, str] = {}  # pid -> token: report its exit
        self.exits = _ExitSignal()
        self.mains: dict[int, str] = {}
        self.failed: dict[str, str] = {}
        self.counter = 0
        self.isolation: dict[str, Any] = {"ipc_namespace": False, "seccomp": False, "ipc_private": False}
        self.landlock_rules: int | None = None  # for backends without namespaces
        self.spare: Spare | None = None
        self.environment_for = ""  # the folder the job environment names now
        # the child's uid and gid maps, written in every fresh IPC namespace: made once
        self.id_maps = proc.id_map_writes(
            self.uid if self.uid is not None else os.geteuid(),
            self.gid if self.gid is not None else os.getegid(),
        )

    # -- the loop -------------------------------------------------------------------
    def serve(self) -> None:
        self.verify_confinement()
        self.isolation = {**self.isolate(), "landlock": self.confine_by_landlock()}
        self.prepare_spare()
        self.send(
            {
                "event": "ready",
                "spare": self.spare_pid(),
                "pid": os.getpid(),
                "uid": os.getuid(),
                "python": sys.version.split()[0],
                "unreadable": self.unreadable_runtime(),
                **self.isolation,
            }
        )
        while True:
            control = self.control.fileno()
            readable = _readable(control, self.exits.fileno)
            if self.exits.fileno in readable:  # exits first: a reset forgets them
                self.exits.drain()
                self.report_exits()
            if control in readable and not self.receive():
                self.reset()
                return

    def receive(self) -> bool:
        data, fds, _flags, _addr = socket.recv_fds(self.control, CONTROL_LIMIT, 16)
        if not data:
            return False
        message = frames.decode_body(data)  # the trusted parent's JSON, the scanner called directly
        operation = message.get("op")
        if operation == "spawn":
            self.spawn(message, fds, data)
        elif operation == "watch":
            self.watch(str(message.get("token")))
        elif operation == "reset":
            report = self.reset(keep_build=message.get("keep_build") is True)
            self.prepare_spare()  # before the reply, which names it
            self.send({"reply": "reset", **report, "spare": self.spare_pid()})
        elif operation == "sweep":
            self.send({"reply": "sweep", **self.sweep(), "spare": self.spare_pid()})
        elif operation == "shutdown":
            self.reset()
            return False
        else:
            for fd in fds:
                os.close(fd)
            self.send({"reply": "error", "message": f"unknown operation {operation!r}"})
        return True

    def send(self, message: dict[str, Any]) -> None:
        self.control.sendall(frames.encode_body(message))

    def verify_confinement(self) -> None:
        """Once, in a probe child: dropping to the sandbox uid leaves no capability."""
        if self.uid is None:
            return
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                proc.drop_privileges(self.uid, self.gid, verify=True)
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise proc.ConfinementError("a dropped child kept privileges; refusing to run")

    def isolate(self) -> dict[str, bool]:
        """Load the system-call filter on the zygote itself, so that every child
        inherits it at no cost. Only where it does not load does each child get an IPC
        namespace of its own (the filter refuses SysV IPC and message queues otherwise):
        probed once, in a child, whether it can. Without a PID namespace (the rlimit
        backend) the zygote first leaves the host's IPC namespace where it can, so that
        jobs do not even list the host's objects (/proc/sysvipc)."""
        private = os.getpid() == 1 or proc.private_ipc_namespace()  # PID 1: bwrap/unshare made one
        program = bytes.fromhex(self.options.get("seccomp") or "")
        if program and _works(lambda: proc.load_seccomp(program)):
            return {"ipc_namespace": False, "seccomp": True, "ipc_private": private}
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                proc.drop_privileges(self.uid, self.gid)
                os.write(write, b"1" if _works(lambda: proc.fresh_ipc_namespace(self.id_maps)) else b"0")
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        with os.fdopen(read, "rb") as answer:
            return {"ipc_namespace": answer.read() == b"1", "seccomp": False, "ipc_private": private}

    def unreadable_runtime(self) -> list[str]:
        """Runtime folders the dropped uid cannot read (the rlimit backend as root, with a
        runtime under a private home such as /root/.pyenv): only modules we preloaded work."""
        paths = [p for p in self.options.get("runtime_paths", []) if os.path.isdir(p)]
        if self.uid is None or not paths:
            return []
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                proc.drop_privileges(self.uid, self.gid, verify=True)
                bad = [p for p in paths if not os.access(p, os.R_OK | os.X_OK)]
                os.write(write, json.dumps(bad).encode())
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        with os.fdopen(read) as answer:
            return list(json.loads(answer.read() or "[]"))

    # -- spawning -------------------------------------------------------------------
    def spawn(self, spec: dict[str, Any], fds: list[int], raw: bytes) -> None:
        """Hand the received descriptors to the spare, or fork a child onto them. No
        reply unless it fails: the parent learns about a child from its pipes; exits
        are reported when watched."""
        token = str(spec["token"])
        pid = self.hand_to_spare(raw, fds)
        if pid is None:
            pid = self.fork_child(spec, fds, token)
        if pid is None:
            return
        for fd in fds:
            os.close(fd)
        self.mains[pid] = token
        if spec.get("watch"):
            self.watch(token)

    def fork_child(self, spec: dict[str, Any], fds: list[int], token: str) -> int | None:
        try:
            workdir = self.new_workdir()
            pid = os.fork()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            self.failed[token] = f"the sandbox could not start a process: {exc}"
            self.send({"reply": "spawn_failed", "token": token, "message": self.failed[token]})
            if spec.get("watch"):
                self.watch(token)
            return None
        if pid == 0:
            self.become_child(workdir, lambda: (spec, fds))
        return pid

    def new_workdir(self) -> str:
        """A new, empty folder for the next child, named from a count that restarts at
        each cleanup (which removes them all): jobs reuse the same few names, so the
        environment naming it (set here, before the fork, rather than in each child)
        takes no new memory from job to job."""
        while True:
            self.counter += 1
            workdir = os.path.join(self.workroot, f"job{self.counter}")
            try:
                os.mkdir(workdir, 0o700)
                break
            except FileExistsError:  # a cleanup that could not remove it: next name
                continue
        if self.uid is not None and self.gid is not None:
            os.chown(workdir, self.uid, self.gid)
        self.make_build_folder()
        if workdir != self.environment_for:  # glibc keeps every distinct value ever set
            enter_job_environment(workdir)
            self.environment_for = workdir
        return workdir

    def make_build_folder(self) -> None:
        """The folder a compiled candidate's build is kept in (see ``kept_build``): made
        here, since the work root itself is not the sandbox user's to write in."""
        path = os.path.join(self.workroot, kept_build.FOLDER)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            return
        if self.uid is not None and self.gid is not None:
            os.chown(path, self.uid, self.gid)

    # A spare is a child forked ahead of demand, after the previous job's cleanup: it
    # has already done everything that does not depend on the job (new session, uid,
    # IPC namespace, system-call filter, its own folder) and waits for a job's
    # descriptors. One job at most uses it, as it would a child forked on request.
    def prepare_spare(self) -> None:
        if self.spare is not None:
            return
        ours = theirs = None
        try:
            workdir = self.new_workdir()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            pid = os.fork()
        except OSError:  # no spare: jobs get a child forked on request
            for end in (ours, theirs):
                if end is not None:
                    end.close()
            return
        if pid == 0:
            ours.close()
            self.become_child(workdir, lambda: _await_job(theirs))
        theirs.close()
        self.spare = Spare(pid, ours)

    def spare_pid(self) -> int | None:
        return self.spare.pid if self.spare is not None else None

    def hand_to_spare(self, raw: bytes, fds: list[int]) -> int | None:
        spare, self.spare = self.spare, None
        if spare is None:
            return None
        try:
            socket.send_fds(spare.channel, [raw], fds)
        except OSError:  # it is gone (killed from outside?): fork on request instead
            proc.kill_quietly(spare.pid)
            return None
        finally:
            spare.channel.close()
        return spare.pid

    def drop_spare(self) -> None:
        """Before a cleanup, which kills it with everything else."""
        if self.spare is not None:
            self.spare.channel.close()
            self.spare = None

    def watch(self, token: str) -> None:
        """Report when the process of ``token`` exits (now, if it already has)."""
        if token in self.failed:
            self.send({"event": "exited", "token": token, "status": {"spawn_failed": self.failed[token]}})
            return
        pid = next((p for p, t in self.mains.items() if t == token), None)
        if pid is not None:
            self.watched[pid] = token
            self.report_exits()  # it may have exited already

    def report_exits(self) -> None:
        """Each watched child that has exited, reaped and reported (on SIGCHLD: the
        filter refuses pidfd_open, to the zygote as to its children)."""
        for pid, token in list(self.watched.items()):
            try:
                done, status, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                done, status, usage = pid, None, None
            if not done:
                continue
            del self.watched[pid]
            self.mains.pop(pid, None)
            if status is not None:
                described = {**proc.describe_status(status), **_usage(usage)}
                self.send({"event": "exited", "token": token, "status": described})

    def become_child(self, workdir: str, job: Any) -> None:
        """In the new child: confine it, then (once ``job()`` gives the spec and the
        descriptors, at once or when a job comes for a spare) run the job."""
        code = 126
        try:
            self.confine_child(workdir)
            spec, fds = job()
            if spec is not None:
                place_descriptors(fds, spec["fd_targets"])
                proc.apply_limits(spec["limits"], self.extra_processes())  # lowering: no privilege needed
                if "checker" not in spec["role"]:  # it may read its own /proc/self/mem
                    proc.prctl(proc.PR_SET_DUMPABLE, 1)
                code = run_role(spec, workdir, self.options)
            else:
                code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            try:
                os.write(2, f"assay sandbox: child setup failed:\n{traceback.format_exc()}".encode())
            except OSError:
                pass
        finally:
            os._exit(code)

    def confine_child(self, workdir: str) -> None:
        """Everything that does not depend on the job (the system-call filter came
        with the fork)."""
        self.exits.forget()
        os.setsid()
        if self.options.get("oom_protected"):
            proc.unprotect_from_oom()
        proc.drop_privileges(self.uid, self.gid)
        if self.isolation["ipc_namespace"]:
            proc.fresh_ipc_namespace(self.id_maps)
        if os.getppid() != 1:  # no PID namespace to take us down with the zygote
            proc.prctl(proc.PR_SET_PDEATHSIG, 9)
        if self.landlock_rules is not None:  # no namespaces of our own: confined instead
            landlock.enforce(self.landlock_rules)
        os.chdir(workdir)

    def confine_by_landlock(self) -> list[str]:
        """Where the backend asks for it and the kernel has Landlock: the rules its
        children take on, and what they confine. The whole work root is writable, not
        only a job's own folder, since every reset empties all of it; so the rules are
        built once, here."""
        writable = self.options.get("landlock_writable")
        if not writable or landlock.abi_version() < 1:
            return []
        self.landlock_rules, confines = landlock.ruleset([self.workroot, *writable])
        return confines

    def extra_processes(self) -> int:
        """Our uid is shared with the host's own processes (rlimit backend, not root):
        the process limit has to count them too."""
        if self.uid is not None or os.getpid() == 1:
            return 1
        return len(proc.processes_of_uid(os.getuid()))

    # -- cleaning up between jobs ---------------------------------------------------
    def reset(self, keep_build: bool = False) -> dict[str, Any]:
        """Kill and clean up after a job; ``keep_build``: between two processes of one job,
        the compiled candidate's kept build stays (see ``kept_build``)."""
        self.drop_spare()
        exits: dict[str, Any] = {}
        self.reap(exits, block=False, killed=False)
        self.watched.clear()
        survivors = self.kill_everything(exits)
        if self.uid is not None and self.mode() == "uid" and not survivors:  # none left to race us
            scrub(self.options.get("scrub_deep", []), self.uid, deep=True)
        self.mains.clear()
        self.failed.clear()
        self.empty_workroot(keep=kept_build.FOLDER if keep_build else None)
        self.counter = 0
        return {"exits": exits, "survivors": survivors}

    def sweep(self) -> dict[str, Any]:
        """Kill every process a job left, but keep the work folders: a program built
        once (``stdio`` jobs) runs again in the next child."""
        self.drop_spare()
        exits: dict[str, Any] = {}
        self.reap(exits, block=False, killed=False)
        self.watched.clear()
        survivors = self.kill_everything(exits, scrub_files=False)
        self.mains.clear()
        self.failed.clear()
        self.prepare_spare()
        return {"exits": exits, "survivors": survivors}

    def reap(self, exits: dict[str, Any], block: bool, killed: bool) -> None:
        """Collect exit statuses; ``block`` waits until we have no child left at all."""
        while True:
            try:
                pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            token = self.mains.pop(pid, None)
            if token is not None:
                exits[token] = {**proc.describe_status(status), "killed_at_reset": killed}

    def kill_everything(self, exits: dict[str, Any], scrub_files: bool = True) -> int:
        """Kill, reap, look again. Orphans of killed processes come back to us (we are
        PID 1 or a child subreaper), so nothing is left when the rounds end."""
        remaining: list[int] = []
        deadline = time.monotonic() + KILL_SECONDS
        while time.monotonic() < deadline:
            self.kill_round(scrub_files)
            self.reap(exits, block=self.mode() == "pidns", killed=True)
            remaining = self.leftovers()
            if not remaining:
                return 0
            time.sleep(0.001)
        return len(remaining)

    def mode(self) -> str:
        if os.getpid() == 1:
            return "pidns"
        return "uid" if self.uid is not None else "subreaper"

    def kill_round(self, scrub_files: bool = True) -> None:
        mode = self.mode()
        if mode == "pidns":
            proc.kill_quietly(-1)  # from PID 1: every other process of the namespace
        elif mode == "uid":
            action = kill_all_and_scrub if scrub_files else kill_all
            self.run_as_sandbox_user(action, self.options.get("scrub_dirs", []))
        else:
            for child in proc.children_of(os.getpid()):
                proc.kill_quietly(-child)
                proc.kill_quietly(child)

    def leftovers(self) -> list[int]:
        mode = self.mode()
        if mode == "pidns":
            return proc.other_pids()
        if mode == "uid":
            assert self.uid is not None
            return proc.processes_of_uid(self.uid)
        return proc.children_of(os.getpid())

    def run_as_sandbox_user(self, action: Any, argument: Any) -> None:
        """Fork a helper that becomes the sandbox's uid: it can signal and delete
        exactly what the sandbox's processes own, and nothing else."""
        pid = os.fork()
        if pid == 0:
            try:
                proc.drop_privileges(self.uid, self.gid)
                action(self.workroot, argument)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)

    def empty_workroot(self, keep: str | None = None) -> None:
        for entry in os.listdir(self.workroot):
            if entry == keep:
                continue
            path = os.path.join(self.workroot, entry)
            try:
                os.rmdir(path)  # the usual case: the job left its folder empty
            except OSError:
                remove_tree(path)
        shm = self.options.get("shm_dir")
        if shm:  # the sandbox's own /dev/shm (the rlimit backend scrubs the host's)
            for entry in os.listdir(shm):
                remove_tree(os.path.join(shm, entry))


class _ExitSignal:
    """SIGCHLD as a readable descriptor: Python's own handler writes a byte to it, so
    that the zygote's ``poll`` wakes when a child exits."""

    def __init__(self) -> None:
        self.read, self.write = os.pipe()
        for end in (self.read, self.write):
            os.set_blocking(end, False)
        self.fileno = self.read
        signal.signal(signal.SIGCHLD, _ignore_signal)
        proc.no_stop_notifications()  # a job stopping its own process must not wake us
        signal.set_wakeup_fd(self.write, warn_on_full_buffer=False)

    def drain(self) -> None:
        try:
            while os.read(self.read, 4096):
                pass
        except BlockingIOError:
            pass

    def forget(self) -> None:
        """In a child: its own children's exits are none of the zygote's business."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(self.read)
        os.close(self.write)


def _usage(usage: Any) -> dict[str, Any]:
    """The kernel's count of what the process used: CPU time (user + system, its own and
    its waited-for children's) and its peak resident memory."""
    if usage is None:
        return {}
    return {"cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000, "max_rss_kb": usage.ru_maxrss}


def _ignore_signal(_signum: int, _frame: Any) -> None:
    """A handler that does nothing: its C half writes the wake-up byte."""


class Spare:
    """The zygote's spare child and our end of the channel its job arrives on."""

    def __init__(self, pid: int, channel: socket.socket) -> None:
        self.pid = pid
        self.channel = channel


def _await_job(channel: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    """In a spare: the job's spec and descriptors (None when the zygote closed the
    channel instead). The channel's descriptor is closed with the others the job does
    not get; the socket object must not close it again later, so it lets go first."""
    data, fds, _flags, _addr = socket.recv_fds(channel, CONTROL_LIMIT, 16)
    channel.detach()
    if not data:
        return None, []
    spec: dict[str, Any] = frames.decode_body(data)  # the trusted parent's JSON
    return spec, fds


def _works(action: Any) -> bool:
    try:
        action()
        return True
    except (OSError, proc.ConfinementError):
        return False


JOB_ENV = ("HOME", "TMPDIR", "PWD")  # the job's folder; the rest is the zygote's own


def enter_job_environment(workdir: str) -> None:
    """In the zygote, before it forks a child for ``workdir``: the child inherits it
    (each os.environ entry set in a child would be page copies there)."""
    for name in JOB_ENV:
        os.environ[name] = workdir


def run_role(spec: dict[str, Any], workdir: str, options: dict[str, Any]) -> int:
    role = spec["role"]
    if role == "exec":
        proc.reset_signals()
        argv = [str(part) for part in spec["argv"]]
        os.execve(argv[0], argv, {**options["env"], **dict.fromkeys(JOB_ENV, workdir)})
    return py_roles.run(role)


def hide_harness(options: dict[str, Any]) -> None:
    """Once, in the zygote, after its imports: the harness's folder must not shadow a
    candidate's imports (the harness's own lazy imports are relative: its package
    still finds them)."""
    hidden = {options.get("harness_root"), options.get("boot_path")}
    sys.path[:] = [entry for entry in sys.path if entry not in hidden]


def preload(modules: list[str]) -> None:
    """Import what candidates commonly import, once, so each fork starts warm."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            continue
    gc.collect()
    for _ in range(2):  # the first pass's own new pools leave free blocks: the second takes them
        fill_free_blocks()
    proc.release_free_heap()  # fewer resident pages: every fork and exit handles each
    gc.freeze()


_FILLERS: list[bytes] = []  # kept for the zygote's life: their blocks stay taken
_FILLED_MIN_SIZE = 48  # the smallest size class a bytes object fits in


def fill_free_blocks() -> None:
    """Take every free block of pymalloc's partly used pools. A child's new objects then
    go to pools of their own instead of into free blocks scattered over pages it shares
    with the zygote (each a page copy): 27 fewer faults a job in the child and 29 in the
    zygote. Where CPython does not report its pools, nothing is filled."""
    for line in _malloc_stats():
        fields = line.split()  # class, size, pools, blocks in use, free blocks
        if len(fields) == 5 and all(field.isdigit() for field in fields):
            size, free = int(fields[1]), int(fields[4])
            if size >= _FILLED_MIN_SIZE:
                _FILLERS.extend(bytes(size - sys.getsizeof(b"")) for _ in range(free))


def _malloc_stats() -> list[str]:
    """What ``sys._debugmallocstats`` writes to descriptor 2, caught in a memfd (a pipe
    could fill up and block the writer); empty where either is missing."""
    stats = getattr(sys, "_debugmallocstats", None)
    create = getattr(os, "memfd_create", None)
    if stats is None or create is None:
        return []
    try:
        fd = create("mallocstats")
    except OSError:
        return []
    saved = os.dup(2)
    try:
        os.dup2(fd, 2)
        stats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    with os.fdopen(fd, "rb") as report:
        report.seek(0)
        return report.read().decode("ascii", "replace").splitlines()


def use_runtime_view(view: dict[str, str]) -> None:
    """Import from a readable copy of a private runtime (see ``readable_runtime``): on
    sys.path and in the ``__path__`` of the packages already imported (importlib, json...),
    where their submodules are looked up."""

    def seen(path: str) -> str:
        for original, copy in sorted(view.items(), key=lambda item: -len(item[0])):
            if path == original or path.startswith(original + "/"):
                return copy + path[len(original) :]
        return path

    if not view:
        return
    sys.path[:] = [seen(entry) for entry in sys.path]
    for module in list(sys.modules.values()):
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [seen(entry) for entry in search]


def _readable(*fds: int) -> set[int]:
    """Which of ``fds`` are readable, waiting for one. ``poll``, not ``select``: the
    descriptors handed down may be numbered 1,024 and above."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return {fd for fd, _events in poller.poll()}


def main() -> None:
    options = json.loads(sys.argv[1])
    from . import py_checker  # noqa: F401  (before confine: roles fork from here)

    if options.get("confine"):
        from . import confine

        confine.enter(options["confine"])
        sys.path[:] = [options["harness_root"], *options["confine"]["python_path"]]
    proc.prctl(proc.PR_SET_NO_NEW_PRIVS, 1)  # inherited by every child
    proc.prctl(proc.PR_SET_DUMPABLE, 0)
    if os.getpid() != 1:
        # no PID namespace: orphans must come back to us, not to the host's init
        proc.prctl(proc.PR_SET_CHILD_SUBREAPER, 1)
    os.makedirs(options["workroot"], exist_ok=True)
    # once here rather than in every child (each os.environ entry a page copy there)
    os.environ.clear()
    os.environ.update(options["env"])
    py_roles.configure_streams()
    use_runtime_view(options.get("runtime_view") or {})
    py_roles.warm_up()  # before preload's freeze
    preload(options.get("preload", []))
    hide_harness(options)
    Zygote(options).serve()
