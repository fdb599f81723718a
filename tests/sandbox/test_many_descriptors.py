"""A process holding more than 1,024 open descriptors (a server with many sockets, a
worker with many files) still runs sandboxed code: the parent waits on its sandboxes
with ``poll``, not ``select``, which refuses descriptors numbered 1,024 and above."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import os, resource, sys
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    assert max(held) >= 1024
    from assay.sandbox import Call, SandboxConfig, SandboxPool
    from assay.sandbox.languages import get_language
    pool = SandboxPool(SandboxConfig(backend=sys.argv[1]))
    run = pool.run_function(get_language("python"), "def f(x):\\n    return x + 1\\n", "f",
                            [Call((41,))], timeout=30)
    print("values", [o.value for o in run.outcomes])
    pool.close()
    """
)


@pytest.mark.parametrize("backend", ["bubblewrap", "rlimit"])
def test_a_parent_with_over_1024_descriptors_runs_sandboxed_code(backend: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, backend], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "values [42]" in done.stdout
