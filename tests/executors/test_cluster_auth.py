"""A loopback Ray cluster started and stopped in a fresh process. Its servers listen on every
interface (Ray has no setting for loopback alone): only a driver with the cluster's own token
gets in, and a token the user keeps in ``~/.ray/auth_token`` is neither needed, used nor
changed. Stopping it ends its nodes and its watchdog. (One cluster serves both files' worth
of checks: a start is the expensive part.)"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

groups_of_nodes = sys.modules["assay_tests_executors_groups"]  # loaded by conftest.py

# Starts a cluster, tries two drivers in fresh processes: one with the cluster's environment,
# one with the user's own (its ~/.ray/auth_token); then stops it and says what was left.
_SCRIPT = textwrap.dedent(
    """
    import json, os, subprocess, sys
    from assay.testing.ray_cluster import LocalCluster

    DRIVER = (
        "import ray, sys\\n"
        "ray.init(address=sys.argv[1], logging_level='ERROR')\\n"
        "print(ray.get(ray.remote(lambda: 6 * 7).remote()))\\n"
    )
    outside = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    # The cluster is up by now: a refused driver tries twice, not Ray's default 20 times a
    # second apart (a driver let in connects at its first try either way).
    outside["RAY_NUM_REDIS_GET_RETRIES"] = "2"
    cluster = LocalCluster(nodes=1, cpus=1).start()
    watchdog, groups = cluster._watchdog, list(cluster._groups)
    report = {"groups": groups, "watchdog_running": watchdog is not None and watchdog.poll() is None}
    try:
        token = cluster.auth_env["RAY_AUTH_TOKEN_PATH"]
        report["mode"] = oct(os.stat(token).st_mode & 0o777)
        report["environ"] = cluster.auth_env == {k: os.environ.get(k) for k in cluster.auth_env}
        drivers = {  # both at once: each spends most of its time importing Ray and waiting
            name: subprocess.Popen([sys.executable, "-c", DRIVER, cluster.address], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for name, env in (("with_token", dict(os.environ)), ("without", outside))
        }
        for name, driver in drivers.items():
            out, err = driver.communicate(timeout=120)
            report[name] = out.strip().splitlines()[-1:] if driver.returncode == 0 else None
            report[name + "_refusal"] = "InvalidAuthToken" in err
    finally:
        cluster.stop()
    report["watchdog_exit"] = None if watchdog is None else watchdog.poll()
    report["restored"] = not any(k in os.environ for k in cluster.auth_env)
    report["folder_left"] = os.path.exists(cluster.temp_dir)
    print(json.dumps(report))
    """
)


@pytest.fixture(scope="module")
def started_and_stopped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The script's report, with the fake home holding the user's own token."""
    home = tmp_path_factory.mktemp("cluster") / "home"
    (home / ".ray").mkdir(parents=True)
    users_token = secrets.token_hex(32)
    (home / ".ray" / "auth_token").write_text(users_token)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return {**report, "home": home, "users_token": users_token}


def test_only_a_driver_with_the_clusters_token_connects(started_and_stopped: dict[str, Any]) -> None:
    report = started_and_stopped
    assert report["with_token"] == ["42"]
    assert report["without"] is None, "a driver without the cluster's token got in"
    assert report["without_refusal"], "refused, but not for its token: the check proves nothing"
    assert not report["with_token_refusal"]
    assert report["mode"] == "0o600"
    assert report["environ"] and report["restored"]
    home: Path = report["home"]
    assert (home / ".ray" / "auth_token").read_text() == report["users_token"]


def test_a_stopped_cluster_leaves_no_watchdog_and_no_node(started_and_stopped: dict[str, Any]) -> None:
    report = started_and_stopped
    assert report["groups"] and report["watchdog_running"], "the cluster should have run, watched"
    assert report["watchdog_exit"] == 0, "the watchdog should exit cleanly on stop"
    running = groups_of_nodes.running_members(report["groups"])
    assert not running, f"stop returned while its nodes' processes still ran: {running}"
    assert report["folder_left"] is False, "the cluster's temporary folder (sessions, logs) was left behind"
