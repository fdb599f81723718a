"""Starting sandbox processes from one long-lived thread."""

from __future__ import annotations

import queue
import subprocess
import threading
from concurrent.futures import Future
from typing import Any

from assay.sandbox._launch import BASE_ENV, LaunchPlan


class _Launcher:
    """bwrap --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started
    it ends, so every sandbox is started from one daemon thread that lives as long as
    the process (a daemon thread is not joined at exit, so pools shut down first)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Any, Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, function: Any) -> Any:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, daemon=True, name="assay-sandbox-launcher"
                )
                self._thread.start()
        future: Future[Any] = Future()
        self._jobs.put((function, future))
        return future.result()

    def _serve(self) -> None:
        while True:
            function, future = self._jobs.get()
            try:
                future.set_result(function())
            except BaseException as exc:
                future.set_exception(exc)


_launcher = _Launcher()


def launch(plan: LaunchPlan, control_fd: int, argv: list[str] | None = None) -> subprocess.Popen[bytes]:
    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            argv or plan.argv,
            pass_fds=[control_fd],
            env=dict(BASE_ENV),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            cwd="/",
            **plan.popen_kwargs,
        )

    process: subprocess.Popen[bytes] = _launcher.run(start)
    return process
