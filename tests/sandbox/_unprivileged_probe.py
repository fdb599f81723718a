"""Run by test_unprivileged.py as uid nobody with the system Python: every backend, for
real, without root. The sandbox package needs only the standard library, so the
``assay`` package is stubbed to skip its pydantic-based ``__init__``."""

import json
import os
import sys
import time
import types
import warnings

package = types.ModuleType("assay")
package.__path__ = [os.path.join(sys.argv[1], "assay")]  # type: ignore[attr-defined]
sys.modules["assay"] = package
warnings.simplefilter("ignore")

from assay.sandbox import Call, SandboxConfig, SandboxPool, get_language  # noqa: E402

PROBE = """
import os, socket, time
def probe(port, neighbour):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(300)
        os._exit(0)
    try:
        with socket.socket() as sock:
            sock.settimeout(1)
            sock.connect((b"127.0.0.1", port))
        network = "connected"
    except OSError:
        network = "refused"
    try:
        os.kill(neighbour, 0)  # a process of the same uid outside the sandbox: this probe
        signal = "signalled"
    except OSError as exc:
        signal = type(exc).__name__
    try:
        with open("/dev/shm/assay-unprivileged-probe-%d" % os.getpid(), "w"):
            shm = "written"
        os.unlink("/dev/shm/assay-unprivileged-probe-%d" % os.getpid())
    except OSError as exc:
        shm = type(exc).__name__
    return [os.getuid(), network, os.path.exists("/etc/passwd"), os.getppid() == 1, signal, shm]
"""
HANG = (
    "import os, time\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n"
    "        time.sleep(300)\n    while True:\n        pass\n"
)


def _start_time(stat: str) -> int:
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22: start, in clock ticks


with open("/proc/self/stat") as _own:
    STARTED = _start_time(_own.read())


def others() -> list[int]:
    """Live processes of our uid started since this probe (not the other processes the
    shared uid may have on the machine), besides this one."""
    mine = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if os.stat(f"/proc/{entry}").st_uid == os.getuid():
                    with open(f"/proc/{entry}/stat") as stat:
                        text = stat.read()
                    if text.rsplit(")", 1)[1].split()[0] != "Z" and _start_time(text) >= STARTED:
                        mine.append(int(entry))
            except OSError:
                continue
    return mine


def left_running(patience: float = 5.0) -> list[int]:
    """``others()`` once the closed pool's kills have landed (a loaded machine delays
    them), or what is still alive after ``patience`` seconds."""
    deadline = time.monotonic() + patience
    while (alive := others()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


python = get_language("python")
report = {}
for backend in ("bubblewrap", "unshare", "rlimit"):
    with SandboxPool(SandboxConfig(backend=backend, workers=1)) as pool:
        run = pool.run_function(python, PROBE, "probe", [Call((int(sys.argv[2]), os.getpid()))], 10)
        hang = pool.run_function(python, HANG, "f", [Call((0,))], 1.0)
        description = pool.describe()
        report[backend] = {
            "value": run.outcomes[0].value,
            "strays": pool.stray_processes(),
            "timed_out": hang.timed_out,
            "user": description["user"],
            "missing": description["missing"],
        }
    report[backend]["left_running"] = left_running()
print(json.dumps(report))
