"""A two-node Ray cluster for the session (started once, stopped at the end), with the
driver (this process) connected to it."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def load_local(name: str) -> ModuleType:
    """A helper module next to this file (tests are not a package under importlib mode)."""
    qualified = f"assay_tests_executors_{name}"
    if qualified not in sys.modules:
        spec = importlib.util.spec_from_file_location(qualified, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module
        spec.loader.exec_module(module)
    return sys.modules[qualified]


workload = load_local("workload")
load_local("groups")


@pytest.fixture(scope="session")
def local_cluster() -> Iterator[Any]:
    """Two nodes of one CPU each, the head serving Ray Client too; this process is
    connected to it as a driver."""
    import ray

    from assay.testing.ray_cluster import LocalCluster

    cluster = LocalCluster(nodes=2, cpus=1, ray_client=True).start()
    try:
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.stop()


@pytest.fixture(scope="session")
def ray_cluster(local_cluster: Any) -> str:
    """The head's address."""
    return str(local_cluster.address)
