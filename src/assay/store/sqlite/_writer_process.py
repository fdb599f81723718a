"""The SQLite writer process seen from the run: starting it, one transaction at a time
with a deadline, stopping it, and the processes a dead run left writing.

Its pipes are non-blocking and every read and write has a deadline, so a process that
stops answering (SIGSTOP, a freezer, something that is not our child at all) costs at
most the deadline: it is then killed, and the caller writes in its own process. A
process forked from the run gets its copy of the pipes pointed at /dev/null, so that the
writer still sees the end of its input when the run dies.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import io
import os
import pickle
import select
import signal
import sqlite3
import subprocess
import sys
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from assay.store.fence import LeaseFencedError, refused_message

__all__ = ["ANSWER_TIMEOUT_S", "WriterProcess", "WriterProcessError", "settle_writers_of"]

ANSWER_TIMEOUT_S = 35.0  # the child's own busy timeout (30 s), and a margin
_BYTES_PER_S = 20e6  # the deadline grows with the batch: a slow disk commits big rows too
_CHILD = Path(__file__).with_name("_writer_child.py")
# Where orjson is installed: the child's one import beyond the standard library (the
# store's JSON, ``_json``, with which it encodes rows exactly as this process would).
_ORJSON_HOME = str(Path(orjson.__file__).resolve().parent.parent)
_READY = ("ready", "assay-sqlite-writer", 1)
_HEADER_SIZE = 8
_MAX_ANSWER = 1 << 20  # answers are a few words: anything longer is not our child
_STARTUP_READ_S = 1.0
_READ_CHUNK = 65536
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_PIPE_BYTES = 1 << 20
_LIVE: weakref.WeakSet[WriterProcess] = weakref.WeakSet()
_BUILDING: list[subprocess.Popen[bytes]] = []  # stopped, still building columns: reaped later
_BUILDING_WAIT_S = 10.0  # at exit, for builds still going (each takes ~5 us a result)


Statements = list[tuple[str, Any, bool | str]]
"""One transaction: ``(sql, params, many)``, as ``_writer_child.commit`` runs them."""


class WriterProcessError(RuntimeError):
    """The writer process ended, answered out of turn or too late: its last batch is in
    doubt (it was committed whole, or not at all)."""


def interpreter() -> str | None:
    """The Python to run the child with (the standard library is all it needs): none for
    a frozen application, whose executable is not a Python."""
    if getattr(sys, "frozen", False):
        return None
    candidate = getattr(sys, "_base_executable", None) or sys.executable
    return candidate if candidate and os.access(candidate, os.X_OK) else None


class WriterProcess:
    """One child running ``_writer_child.py`` on the database at ``path``.

    Subclasses run another child on the same frames (``postgres._writer``): they
    name its script (``CHILD``, ``KIND``), its arguments after the script and what its
    errors mean (``_error``); ``setup`` is its first frame (SQLite's: the PRAGMAs)."""

    CHILD = _CHILD
    KIND = "SQLite"
    READY: tuple[str, str, int] = _READY

    def __init__(self, path: str, setup: Sequence[str], answer_timeout: float = ANSWER_TIMEOUT_S) -> None:
        _reap_builders()
        python = interpreter()
        if python is None:
            raise WriterProcessError(f"no Python interpreter to start the {self.KIND} writer process with")
        # its own session: a Ctrl-C to the terminal's group interrupts the run, which then
        # flushes through this process. The run's pid names it (``settle_writers_of``).
        self._proc = subprocess.Popen(
            [python, "-I", "-S", str(self.CHILD), path, str(os.getpid()), *self._arguments()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            bufsize=0,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in, self._out = self._proc.stdin.fileno(), self._proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        with contextlib.suppress(OSError):  # a smaller pipe only takes more calls
            fcntl.fcntl(self._in, _F_SETPIPE_SZ, _PIPE_BYTES)
        self._received = bytearray()
        self._state = "starting"
        self._owed: list[tuple[Statements, Callable[[Statements], None]]] = []  # ``hand``
        self._answer_timeout = answer_timeout
        _LIVE.add(self)
        try:
            self.send(list(setup), time.monotonic() + _STARTUP_READ_S)
        except WriterProcessError:
            self.close()
            raise

    def _arguments(self) -> list[str]:
        """The child's arguments after the database and the run's pid."""
        return [_ORJSON_HOME]

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    def running(self) -> bool:
        """Whether it has not exited (asks the kernel)."""
        return self._proc.poll() is None

    def state(self) -> str:
        """``"starting"``, ``"ready"`` (it has opened the database) or ``"failed"``;
        waits for nothing but a ready answer already on its way."""
        if self._state != "starting":
            return self._state
        if self._readable(0):
            try:
                answer = self.receive(time.monotonic() + _STARTUP_READ_S)
            except WriterProcessError:
                answer = None
            self._state = "ready" if self._is_ready(answer) else "failed"
        elif self._proc.poll() is not None:
            self._state = "failed"
        return self._state

    def _is_ready(self, answer: object) -> bool:
        return answer == self.READY

    def hand(self, statements: Statements, replay: Callable[[Statements], None]) -> None:
        """Send one transaction now, its answer read later, before any other (``settle``):
        a run's inline examples, committed here while the run starts its rows. ``replay``
        commits them in the caller's process if this one does not confirm it did (it
        must leave alone what is already committed: the transaction's guard does)."""
        self._owed.append((statements, replay))
        with contextlib.suppress(WriterProcessError):  # unsent: ``settle`` replays it
            body = _pickled(statements)
            self._write_frame(body, time.monotonic() + self._answer_timeout + len(body) / _BYTES_PER_S)

    def settle(self) -> None:
        """Wait for the answers to the transactions handed over (``hand``), replaying in
        the caller's process each not confirmed committed. Before any other frame's
        answer is awaited, and before it stops: nothing written after them, here or in
        the caller's process, is committed before them."""
        while self._owed:
            statements, replay = self._owed.pop(0)
            deadline = time.monotonic() + self._answer_timeout
            try:
                confirmed = self._ready(deadline) and self.receive(deadline) == ("ok",)
            except WriterProcessError:
                confirmed = False
            except BaseException:  # interrupted while waiting: its answer may come unread later
                self._state = "failed"  # so write no more through it, and replay this later
                self._owed.insert(0, (statements, replay))
                raise
            if not confirmed:
                self._state = "failed"  # its answers are out of step now: write no more through it
                replay(statements)

    def _ready(self, deadline: float) -> bool:
        while self.state() == "starting":
            if not self._readable(max(0.0, deadline - time.monotonic())):
                raise self._too_late()
        return self._state == "ready"

    def commit(self, statements: Statements) -> None:
        """Commit one transaction; raises the sqlite3 error the child met (rolled back),
        ``LeaseFencedError`` when the batch's lease guard refused it,
        or ``WriterProcessError`` when it is gone or did not answer in time (killed)."""
        self.answer_to(statements, self.send_batch(statements))

    def send_batch(self, statements: Statements) -> int:
        """Send one transaction, its answer read later (``answer_to``, in the order they
        were sent); returns its size in bytes. Raises ``WriterProcessError`` when it
        could not be sent whole (the process is then killed or gone: nothing of it commits)."""
        self.settle()
        if self._state == "failed":
            raise self._failed("did not commit what it was handed before")
        body = _pickled(statements)
        self._write_frame(body, time.monotonic() + self._answer_timeout + len(body) / _BYTES_PER_S)
        return len(body)

    def answer_to(self, statements: Statements, size: int) -> None:
        """Wait for the answer to ``statements`` (sent, ``size`` bytes, the oldest not
        yet answered), raising as ``commit`` does."""
        answer = self.receive(time.monotonic() + self._answer_timeout + size / _BYTES_PER_S)
        if answer == ("ok",):
            return
        if isinstance(answer, tuple) and len(answer) >= 3 and answer[0] == "error":
            if answer[1] == "_Fenced":  # a guard of the batch refused it
                guard = next(params for _, params, many in statements if many == "guard")
                raise LeaseFencedError(refused_message(guard))
            raise self._error(answer)
        raise self._failed(f"answered {answer!r:.80}")

    def _error(self, answer: tuple[Any, ...]) -> Exception:
        """The exception the child's ``("error", class name, message)`` stands for."""
        error_class = getattr(sqlite3, str(answer[1]), sqlite3.DatabaseError)
        if not (isinstance(error_class, type) and issubclass(error_class, sqlite3.Error)):
            error_class = sqlite3.DatabaseError
        return error_class(str(answer[2]))

    def send(self, message: Any, deadline: float) -> None:
        self._write_frame(_pickled(message), deadline)

    def receive(self, deadline: float) -> Any:
        size = int.from_bytes(self._read_exactly(_HEADER_SIZE, deadline), "little")
        if size > _MAX_ANSWER:
            raise self._failed(f"sent a frame of {size} bytes")
        body = self._read_exactly(size, deadline)
        try:
            return _Answer(io.BytesIO(body)).load()
        except Exception as exc:  # noqa: BLE001 - whatever it sent, it is not an answer
            raise self._failed(f"sent what is not an answer ({type(exc).__name__})") from exc

    def close_building_columns(self, experiment_id: str, *, marked: bool = False) -> bool:
        """Stop it, letting it build the experiment's metric columns first (after the
        run's last commit, on the other core): returns once the build is marked pending,
        without waiting for the build. ``marked``: the mark was committed with the last
        batch, so there is nothing to wait for (it answers nothing). False when it did not
        take the build (it is then closed as ``close`` does)."""
        answer = None
        self.settle()
        if self.state() == "ready":
            deadline = time.monotonic() + self._answer_timeout
            with contextlib.suppress(WriterProcessError):
                self.send(("columns", experiment_id, marked), deadline)
                answer = ("ok",) if marked else self.receive(deadline)
        if answer != ("ok",):
            self.close()
            return False
        self._let_go()
        _BUILDING.append(self._proc)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Tell it to stop and wait for it to exit (killed if it does not in time). One
        that never became ready has nothing of ours: it is killed at once."""
        try:
            self.settle()
        finally:
            self._stop(timeout)

    def _stop(self, timeout: float) -> None:
        if self._state != "ready":
            self._proc.kill()
        self._let_go()
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def _let_go(self) -> None:
        """Tell it to stop, and close our ends of its pipes."""
        _LIVE.discard(self)
        with contextlib.suppress(WriterProcessError, OSError):
            self.send(None, time.monotonic() + 1.0)
        for pipe in (self._proc.stdin, self._proc.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()

    # the pipes
    def _write_frame(self, body: bytes, deadline: float) -> None:
        """Header and body in one ``writev``: the pipe holds a whole batch (1 MiB where
        the kernel allows), so a frame is usually one call and one release of the GIL,
        whose taking back can wait behind the row threads."""
        parts = [memoryview(len(body).to_bytes(_HEADER_SIZE, "little")), memoryview(body)]
        while parts:
            try:
                written = os.writev(self._in, parts)
            except BlockingIOError:
                written = 0
            except OSError as exc:
                raise self._failed("is gone") from exc
            parts = _unwritten(parts, written)
            if parts and not self._wait(self._in, for_write=True, deadline=deadline):
                raise self._too_late()

    def _read_exactly(self, size: int, deadline: float) -> bytes:
        while len(self._received) < size:
            try:
                chunk = os.read(self._out, _READ_CHUNK)
            except BlockingIOError:
                if not self._wait(self._out, for_write=False, deadline=deadline):
                    raise self._too_late() from None
                continue
            except OSError as exc:
                raise self._failed("is gone") from exc
            if not chunk:
                raise self._failed("is gone")
            self._received += chunk
        data = bytes(self._received[:size])
        del self._received[:size]
        return data

    def _readable(self, timeout: float) -> bool:
        return self._wait(self._out, for_write=False, deadline=time.monotonic() + timeout)

    @staticmethod
    def _wait(fd: int, *, for_write: bool, deadline: float) -> bool:
        remaining = max(0.0, deadline - time.monotonic())
        poller = select.poll()  # not select.select: this process may hold > 1,024 descriptors
        poller.register(fd, select.POLLOUT if for_write else select.POLLIN)
        return bool(poller.poll(remaining * 1000))

    def _too_late(self) -> WriterProcessError:
        self._proc.kill()
        self._proc.wait()
        return self._failed(f"did not answer within {self._answer_timeout:g} s and was killed")

    def _failed(self, what: str) -> WriterProcessError:
        self._state = "failed"
        code = self._proc.poll()
        status = "" if code is None else f", exit status {code}"
        return WriterProcessError(f"the {self.KIND} writer process (pid {self._proc.pid}{status}) {what}")


class _Answer(pickle.Unpickler):
    """Answers are tuples of words and numbers: nothing to import, whoever sent them."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} is not part of an answer")


def _unwritten(parts: list[memoryview], written: int) -> list[memoryview]:
    """What is left of ``parts`` once ``written`` bytes of them went out."""
    left = []
    for part in parts:
        if written >= len(part):
            written -= len(part)
            continue
        left.append(part[written:])
        written = 0
    return left


def _pickled(message: Any) -> bytes:
    try:
        return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - written in this process instead
        raise WriterProcessError(f"a batch could not be handed to the writer process: {exc}") from exc


def _forget_in_child() -> None:
    """In a process forked from the run: point its copies of the writers' pipes at
    /dev/null, so that only the run holds them (the writer sees the run die)."""
    _BUILDING.clear()  # the run's children, not this process's
    live = list(_LIVE)
    if not live:
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for process in live:
            for fd in (process._in, process._out):
                with contextlib.suppress(OSError):
                    os.dup2(null, fd)
    finally:
        os.close(null)
    _LIVE.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def _reap_builders() -> None:
    _BUILDING[:] = [proc for proc in _BUILDING if proc.poll() is None]


@atexit.register
def _wait_for_builders(timeout: float | None = _BUILDING_WAIT_S) -> None:
    """At exit, let the column builds still going end (a build left behind is not lost:
    it goes on, and commits, after this process has gone). ``None`` waits for all."""
    deadline = None if timeout is None else time.monotonic() + timeout
    for proc in _BUILDING:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
    _reap_builders()


def settle_writers_of(
    path: str, run_pid: int, timeout: float = ANSWER_TIMEOUT_S + 5, *, child: Path = _CHILD
) -> None:
    """Wait for the writer processes that the dead run ``run_pid`` left on the database
    at ``path`` to commit what they were handed and exit; kill those still there after
    ``timeout`` (what they had not committed is rolled back). A run that takes the dead
    run's place calls this first, so no late commit lands under it. ``child``: the
    script they run (PostgreSQL's writers run another)."""
    deadline, seen = time.monotonic() + timeout, set()
    while True:
        named = _writers_of(child, path, run_pid)
        seen.update(named)
        # an exiting process no longer shows its command line: wait for it to be gone
        pids = named or [pid for pid in seen if _running(pid)]
        if not pids:
            return
        if time.monotonic() > deadline:
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.02)


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (it has ended, its parent not told)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _writers_of(child: Path, path: str, run_pid: int) -> list[int]:
    wanted = [str(child).encode(), path.encode(), str(run_pid).encode()]
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:  # no /proc (not Linux): nothing to wait for that we could see
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 6 and argv[3:6] == wanted:
            found.append(int(entry))
    return found
