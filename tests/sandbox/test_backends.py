"""Backend choice, minimum levels, the warning, and what each backend really enforces."""

from __future__ import annotations

import os
import shutil
import threading
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import assay.sandbox._backends as backends_module
import assay.sandbox._pool as pool_module
from assay.sandbox import (
    Call,
    Limits,
    SandboxConfig,
    SandboxIsolationWarning,
    SandboxPool,
    SandboxUnavailableError,
    choose_backend,
    get_pool,
    shutdown_pools,
)
from assay.sandbox.config import MIB

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
ROOT = os.geteuid() == 0


def test_auto_picks_the_strongest_available_backend() -> None:
    assert choose_backend(SandboxConfig(), user_namespace=not ROOT).name == "bubblewrap"


def test_falls_back_when_tools_are_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which
    missing: set[str] = {"bwrap"}
    monkeypatch.setattr(
        backends_module.shutil, "which", lambda name: None if name in missing else real_which(name)
    )
    assert choose_backend(SandboxConfig(), not ROOT).name == "unshare"
    missing.add("unshare")
    assert choose_backend(SandboxConfig(), not ROOT).name == "rlimit"
    with pytest.raises(SandboxUnavailableError, match="bubblewrap: bwrap is not installed"):
        choose_backend(SandboxConfig(min_level="unshare"), not ROOT)


def test_minimum_level_refuses_weaker_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        SandboxUnavailableError,
        match=r"rlimit: below the required minimum level "
        r"\(unshare\)",
    ):
        SandboxPool(SandboxConfig(backend="rlimit", min_level="unshare"))
    monkeypatch.setenv("ASSAY_SANDBOX_MIN_LEVEL", "bubblewrap")
    with pytest.raises(SandboxUnavailableError, match="unshare: below the required minimum"):
        choose_backend(SandboxConfig(backend="unshare"), not ROOT)
    monkeypatch.setenv("ASSAY_SANDBOX_MIN_LEVEL", "nonsense")
    with pytest.raises(SandboxUnavailableError, match="not a backend name"):
        SandboxConfig().required_level()


def test_environment_chooses_the_backend_for_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_SANDBOX_BACKEND", "unshare")
    assert choose_backend(SandboxConfig(), not ROOT).name == "unshare"
    assert choose_backend(SandboxConfig(backend="bubblewrap"), not ROOT).name == "bubblewrap"


def test_the_shared_pool_follows_the_environment_and_shutdown(monkeypatch: pytest.MonkeyPatch) -> None:
    """get_pool remembers a config's pool, but a changed variable picks another pool,
    a bad one is still refused, and after shutdown_pools a fresh pool is made."""
    monkeypatch.setattr(pool_module, "_pools", {})
    monkeypatch.setattr(pool_module, "_recent", {})
    config = SandboxConfig(workers=1, limits=Limits(memory_bytes=300 * MIB))
    monkeypatch.delenv("ASSAY_SANDBOX_BACKEND", raising=False)
    monkeypatch.delenv("ASSAY_SANDBOX_MIN_LEVEL", raising=False)
    try:
        strongest = get_pool(config)
        assert get_pool(config) is strongest
        assert get_pool(SandboxConfig(workers=1)) is strongest  # limits are per job
        monkeypatch.setenv("ASSAY_SANDBOX_BACKEND", "rlimit")
        assert get_pool(config).backend.name == "rlimit"
        monkeypatch.setenv("ASSAY_SANDBOX_MIN_LEVEL", "bubblewrap")
        with pytest.raises(SandboxUnavailableError, match="below the required minimum"):
            get_pool(config)
        monkeypatch.setenv("ASSAY_SANDBOX_MIN_LEVEL", "nonsense")
        with pytest.raises(SandboxUnavailableError, match="not a backend name"):
            get_pool(config)
        monkeypatch.delenv("ASSAY_SANDBOX_BACKEND")
        monkeypatch.delenv("ASSAY_SANDBOX_MIN_LEVEL")
        assert get_pool(config) is strongest
        shutdown_pools()
        assert get_pool(config) is not strongest
    finally:
        shutdown_pools()


def test_unknown_backend_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown sandbox backend 'docker'"):
        SandboxConfig(backend="docker")


@pytest.mark.filterwarnings("default::assay.sandbox.SandboxIsolationWarning")
def test_missing_protections_are_warned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "_warned", set())
    with pytest.warns(SandboxIsolationWarning, match="no network namespace") as caught:
        first = SandboxPool(SandboxConfig(backend="rlimit", workers=1))
        second = SandboxPool(SandboxConfig(backend="rlimit", workers=1))
    assert len([w for w in caught if "no network namespace" in str(w.message)]) == 1
    first.close()
    second.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SandboxIsolationWarning)
        SandboxPool(SandboxConfig(backend="bubblewrap", workers=1)).close()  # nothing missing


@pytest.mark.parametrize("backend", ["bubblewrap", "unshare", "rlimit"])
def test_identity_and_privileges_inside(
    make_pool: Callable[..., SandboxPool], python: Any, backend: str
) -> None:
    pool = make_pool(backend)
    code = (
        "def solution(x):\n    import os\n    status = open('/proc/self/status').read()\n"
        "    fields = dict(line.split(':', 1) for line in status.splitlines())\n"
        "    return [os.getuid(), os.getgid(), os.getgroups(), fields['CapEff'].strip(),\n"
        "            fields['NoNewPrivs'].strip(), os.getppid()]\n"
    )
    run = pool.run_function(python, code, "solution", [Call((0,))], 10)
    uid, gid, groups, caps, no_new_privs, parent = run.outcomes[0].value
    assert caps == "0000000000000000"
    assert no_new_privs == "1"
    assert groups == []
    if ROOT:
        assert uid == gid and uid >= 1_900_000_000, "a dedicated unprivileged host uid"
    if backend != "rlimit":
        assert parent == 1, "its own PID namespace, whose init is the zygote"


def test_user_namespace_mode_runs_as_nobody(make_pool: Callable[..., SandboxPool], python: Any) -> None:
    for backend in ("bubblewrap", "unshare"):
        pool = make_pool(backend, user_namespace=True)
        run = pool.run_function(
            python, "import os\ndef f(x):\n    return os.getuid()\n", "f", [Call((0,))], 10
        )
        assert run.outcomes[0].value == 65534
        assert "user namespace" in pool.describe()["user"]


def test_parallel_jobs_share_a_pool_correctly(make_pool: Callable[..., SandboxPool], python: Any) -> None:
    pool = make_pool("bubblewrap", workers=2)
    failures: list[str] = []

    def work(n: int) -> None:
        code = f"def f(x):\n    return x * {n}\n"
        run = pool.run_function(python, code, "f", [Call((i,)) for i in range(5)], 10)
        if [o.value for o in run.outcomes] != [i * n for i in range(5)]:
            failures.append(f"job {n}: {run.outcomes}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert pool.stray_processes() == []


def test_a_sandbox_killed_from_outside_is_replaced(
    make_pool: Callable[..., SandboxPool], python: Any
) -> None:
    """Right after the kill, before the pool can have noticed it: the next job must still
    run (the race was lost about one time in ten before the lease asked the kernel)."""
    pool = make_pool("bubblewrap", workers=1)
    pool.run_function(python, "def f(x):\n    return x\n", "f", [Call((1,))], 10)
    for attempt in range(12):
        (sandbox,) = [s for s in pool.candidates.started if not s.dead]
        os.kill(sandbox.zygote_pid, 9)
        run = pool.run_function(python, "def f(x):\n    return x\n", "f", [Call((attempt,))], 10)
        assert [o.value for o in run.outcomes] == [attempt], (attempt, run.load_failure)
    assert pool.stray_processes() == []


def test_run_script(pool: SandboxPool, python: Any, javascript: Any) -> None:
    run = pool.run_script(
        python, "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)\n", timeout=10
    )
    assert (run.exit_code, run.output.stdout, run.output.stderr) == (3, "out\n", "err\n")
    crashed = pool.run_script(python, "raise ValueError('boom')\n", timeout=10)
    assert crashed.exit_code == 1 and "ValueError: boom" in crashed.output.stderr
    js = pool.run_script(javascript, "console.log(6 * 7); process.exitCode = 2;", timeout=10)
    assert (js.exit_code, js.output.stdout) == (2, "42\n")


def test_a_private_runtime_is_copied_readable_by_others_and_writable_by_none(tmp_path: Any) -> None:
    """The rlimit backend's copy of a runtime its uid cannot read: hard links where the
    file is readable by all, a readable copy where not, no site-packages, no test package;
    a second maker (another process) finds it made and keeps it."""
    lib = tmp_path / "home" / "lib"
    (lib / "pkg").mkdir(parents=True)
    for folder in ("site-packages", "test"):
        (lib / folder).mkdir()
    (lib / "mod.py").write_text("x = 1\n")
    (lib / "pkg" / "secret.py").write_text("y = 2\n")
    os.chmod(lib / "pkg" / "secret.py", 0o600)
    os.chmod(lib / "mod.py", 0o644)
    os.chmod(tmp_path / "home", 0o700)
    copy = tmp_path / "copy"
    for _ in range(2):
        backends_module._copy_runtime([str(lib)], str(copy))
    assert sorted(os.listdir(copy / "0")) == ["mod.py", "pkg"]
    assert os.stat(copy / "0" / "mod.py").st_ino == os.stat(lib / "mod.py").st_ino
    assert os.stat(copy / "0" / "pkg" / "secret.py").st_mode & 0o777 == 0o644
    assert (copy / "0" / "pkg" / "secret.py").read_text() == "y = 2\n"
    assert {os.stat(copy / f).st_mode & 0o777 for f in ("0", "0/pkg")} == {0o755}
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".staging-")]
