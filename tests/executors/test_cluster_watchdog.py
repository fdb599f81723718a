"""A loopback Ray cluster does not outlive the process that started it, even when that
process is killed without a chance to stop it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

groups_of_nodes = sys.modules["assay_tests_executors_groups"]  # loaded by conftest.py

_OWNER = textwrap.dedent(
    """
    import sys, time
    from assay.testing.ray_cluster import LocalCluster
    cluster = LocalCluster(nodes=1, cpus=1).start()
    print(" ".join(str(g) for g in cluster._groups), flush=True)
    print(cluster.temp_dir, cluster._watchdog.pid, flush=True)
    time.sleep(600)
    """
)


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_killed_owner_takes_its_cluster_with_it() -> None:
    with subprocess.Popen([sys.executable, "-c", _OWNER], stdout=subprocess.PIPE, text=True) as owner:
        try:
            assert owner.stdout is not None
            groups = [int(g) for g in owner.stdout.readline().split()]
            folder_name, watchdog_pid = owner.stdout.readline().rsplit(maxsplit=1)
            folder, watchdog = Path(folder_name), os.pidfd_open(int(watchdog_pid))
            assert groups and all(_alive(g) for g in groups), "the node should be running"
        finally:
            owner.send_signal(signal.SIGKILL)
            owner.wait()
        deadline = time.monotonic() + 60  # a bound for a broken machine, not a timing claim
        while (running := groups_of_nodes.running_members(groups)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running, f"the node outlived its killed owner: {running}"
        # the watchdog removes the folder, then exits: its exit is the event to wait for
        ended, _, _ = select.select([watchdog], [], [], 60)  # 60 s: a broken machine's bound
        os.close(watchdog)
        assert ended, "the watchdog did not exit after its owner was killed"
        assert not folder.exists(), f"the cluster's folder outlived its killed owner: {folder}"
