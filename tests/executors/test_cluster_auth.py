"""A loopback Ray cluster's servers listen on every interface (Ray has no setting for
loopback alone): only a driver with the cluster's own token gets in, and a token the user
keeps in ``~/.ray/auth_token`` is neither needed, used nor changed."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# Starts a cluster, then tries two drivers in fresh processes: one with the cluster's
# environment, one with the user's own (its ~/.ray/auth_token).
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
    cluster = LocalCluster(nodes=1, cpus=1).start()
    try:
        token = cluster.auth_env["RAY_AUTH_TOKEN_PATH"]
        report = {"mode": oct(os.stat(token).st_mode & 0o777), "environ": cluster.auth_env == {
            k: os.environ.get(k) for k in cluster.auth_env}}
        for name, env in (("with_token", dict(os.environ)), ("without", outside)):
            done = subprocess.run([sys.executable, "-c", DRIVER, cluster.address], env=env,
                                  capture_output=True, text=True, timeout=60)
            report[name] = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else None
            report[name + "_refusal"] = "InvalidAuthToken" in done.stderr
    finally:
        cluster.stop()
    report["restored"] = not any(k in os.environ for k in cluster.auth_env)
    print(json.dumps(report))
    """
)


def test_only_a_driver_with_the_clusters_token_connects(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    users_token = secrets.token_hex(32)
    (home / ".ray" / "auth_token").write_text(users_token)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["with_token"] == ["42"]
    assert report["without"] is None, "a driver without the cluster's token got in"
    assert report["without_refusal"], "refused, but not for its token: the check proves nothing"
    assert not report["with_token_refusal"]
    assert report["mode"] == "0o600"
    assert report["environ"] and report["restored"]
    assert (home / ".ray" / "auth_token").read_text() == users_token
