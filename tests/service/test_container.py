"""The Dockerfile's image, built and run with podman: the built-in evaluators served from a
container, code candidates judged in the container's sandbox, the token rule kept."""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_testing import TOKEN, free_port

from assay.evaluation._binding import bind_row_evaluator
from assay.schemas import Example, Run
from assay.service import RemoteEvaluator

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "localhost/assay-evaluators:test"
SQUARE = Example(
    inputs={"test_cases": [{"input": 3, "expected_output": 9}, {"input": -2, "expected_output": 4}]}
)
# What bubblewrap needs inside a container (docs/service.md).
SANDBOX_OPTIONS = [
    "--security-opt",
    "seccomp=unconfined",
    "--security-opt",
    "apparmor=unconfined",
    "--cap-add",
    "SYS_ADMIN",
    "--cap-add",
    "NET_ADMIN",  # bubblewrap brings up the loopback interface of its network namespace
]


def machine_flags() -> list[str]:
    out = subprocess.run(
        [str(ROOT / "scripts/evaluator-image"), "run-flags"], check=True, capture_output=True, text=True
    ).stdout
    return out.split()


# What goes into the image: the build context the Dockerfile copies, and how it is built.
BUILD_INPUTS = ("Dockerfile", ".dockerignore", "pyproject.toml", "README.md", "scripts/evaluator-image")
IGNORED = ("__pycache__", ".egg-info", ".pyc")  # .dockerignore's patterns, as path parts


def content_key() -> str:
    """A digest of every file the image is built from, and of the base it starts from:
    an image tagged with it is this build, whoever built it (another worktree, an earlier
    session), so it is reused rather than built again."""
    digest = hashlib.sha256()
    sources = sorted(
        path
        for path in (ROOT / "src").rglob("*")
        if path.is_file() and not any(part.endswith(IGNORED) for part in path.parts)
    )
    for path in [*(ROOT / name for name in BUILD_INPUTS), *sources]:
        digest.update(f"{path.relative_to(ROOT)}\0{len(path.read_bytes())}\0".encode())
        digest.update(path.read_bytes())
    digest.update(base_identity().encode())
    return digest.hexdigest()[:16]


def base_identity() -> str:
    """The base image scripts/evaluator-image builds on: its name, and its id if it exists."""
    name = os.environ.get("ASSAY_IMAGE_BASE", "localhost/assay-base:bookworm")
    found = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Id}}", name], capture_output=True, text=True
    )
    return f"{name}@{found.stdout.strip() if found.returncode == 0 else 'absent'}"


#: held by every build of the image: scripts/test starts one in the background, early
BUILD_LOCK = Path(tempfile.gettempdir()) / "assay-evaluator-image.lock"


@pytest.fixture(scope="session")
def image() -> str:
    """The image of this checkout, built once (scripts/evaluator-image) under a tag naming
    its content, so concurrent checkouts never run each other's image. A build under way
    (scripts/test's, in the background) is waited for: then every layer is cached."""
    with BUILD_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        tag = f"{IMAGE}-{content_key()}"  # after the wait: the base may exist now
        if subprocess.run(["podman", "image", "exists", tag]).returncode == 0:
            return tag
        built = subprocess.run(
            [str(ROOT / "scripts/evaluator-image"), "build", tag],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    remove_older_test_images(keep=KEPT_TEST_IMAGES)
    return tag


#: test images kept (the newest): each edit of src/ builds one, ~750 MB of which assay's
#: layer is a few MB, the rest shared; a few are kept for checkouts testing at once
KEPT_TEST_IMAGES = 3


def remove_older_test_images(keep: int) -> None:
    """Untag all but the ``keep`` newest test images; one a container still uses stays
    (``podman rmi`` without ``--force`` refuses it)."""
    listed = subprocess.run(
        [
            "podman",
            "images",
            "--format",
            "{{.CreatedAt}}\t{{.Repository}}:{{.Tag}}",
            "--filter",
            f"reference={IMAGE}-*",
        ],
        capture_output=True,
        text=True,
    )
    newest_first = [line.split("\t")[1] for line in sorted(listed.stdout.splitlines(), reverse=True)]
    for old in newest_first[keep:]:
        subprocess.run(["podman", "rmi", old], capture_output=True)


def start(image: str, port: int, *options: str) -> str:
    """The image's own command (the built-ins on 0.0.0.0:8766), published on 127.0.0.1:port."""
    started = subprocess.run(
        [
            "podman",
            "run",
            "-d",
            "--rm",
            "-p",
            f"127.0.0.1:{port}:8766",
            *machine_flags(),
            *options,
            "-e",
            f"ASSAY_SERVICE_TOKEN={TOKEN}",
            image,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return started.stdout.strip()


@pytest.fixture
def launch(image: str) -> Iterator[Callable[..., str]]:
    """Start the image serving on a port (healthy when returned); removed after the test."""
    started: list[str] = []

    def run(port: int, *options: str) -> str:
        container_id = start(image, port, *options)
        started.append(container_id)
        wait_healthy(port, container_id)
        return container_id

    yield run
    for container_id in started:
        subprocess.run(["podman", "rm", "-f", container_id], capture_output=True)


def wait_healthy(port: int, container_id: str) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    logs = subprocess.run(["podman", "logs", container_id], capture_output=True, text=True)
    raise RuntimeError(f"the container did not answer within 90 s:\n{logs.stdout}{logs.stderr}")


def judge(port: int, code: str) -> dict[str, Any]:
    evaluator = RemoteEvaluator(f"http://127.0.0.1:{port}", "code_correctness", token=TOKEN, timeout=60)
    call = bind_row_evaluator(evaluator).call_async(Run(outputs={"text": code}), SQUARE)
    [result] = asyncio.run(call)
    return result.model_dump()


@pytest.mark.slow
def test_the_image_refuses_to_serve_publicly_without_a_token(image: str) -> None:
    ran = subprocess.run(
        ["podman", "run", "--rm", *machine_flags(), image],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 2
    assert "refusing to serve on '0.0.0.0' without a token" in ran.stdout + ran.stderr


@pytest.mark.slow
def test_the_image_judges_code_in_bubblewrap_with_the_documented_options(
    launch: Callable[..., str],
) -> None:
    port = free_port()
    launch(port, *SANDBOX_OPTIONS)
    assert httpx.get(f"http://127.0.0.1:{port}/evaluators").status_code == 401
    right = judge(port, "def solution(n):\n    return n * n")
    wrong = judge(port, "def solution(n):\n    return n * n if n > 0 else 0")
    assert right["error"] is None and right["score"] == 1.0
    assert wrong["error"] is None and wrong["score"] == 0.5
    sandbox = right["metadata"]["sandbox"]
    assert sandbox["backend"] == "bubblewrap" and sandbox["level"] == 3


@pytest.mark.slow
def test_without_the_options_the_sandbox_falls_back_and_says_so(launch: Callable[..., str]) -> None:
    port = free_port()
    launch(port)
    right = judge(port, "def solution(n):\n    return n * n")
    assert right["error"] is None and right["score"] == 1.0
    sandbox = right["metadata"]["sandbox"]
    assert sandbox["backend"] != "bubblewrap" and sandbox["level"] < 3
