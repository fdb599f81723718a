"""The service's guard: the token rule, the loopback rule (DNS rebinding), the size limit,
and the settings refused before the server binds (a real ``assay serve-evaluators``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from service_testing import LIGHT, TOKEN, LiveService, free_port

from assay.schemas import Example, Run
from assay.service.wire import encode_request

BODY = encode_request(Run(outputs={"answer": 1}), Example(outputs={"answer": 1}))
EVALUATE = "/evaluators/exact/evaluate"


@pytest.fixture(scope="module")
def guarded() -> Iterator[LiveService]:
    with LiveService(LIGHT, token=TOKEN, max_body_bytes=4096) as live:
        yield live


@pytest.fixture(scope="module")
def open_loopback() -> Iterator[LiveService]:
    with LiveService(LIGHT) as live:
        yield live


def post(url: str, body: bytes = BODY, **headers: str) -> httpx.Response:
    return httpx.post(url + EVALUATE, content=body, headers={"content-type": "application/json", **headers})


def test_with_a_token_every_request_needs_it(guarded: LiveService) -> None:
    assert post(guarded.url).status_code == 401
    assert post(guarded.url, authorization="Bearer wrong-token-000").status_code == 401
    assert post(guarded.url, authorization=f"Basic {TOKEN}").status_code == 401
    for path in ("/evaluators", "/openapi.json"):
        assert httpx.get(guarded.url + path).status_code == 401
    answered = post(guarded.url, authorization=f"Bearer {TOKEN}")
    assert answered.status_code == 200 and answered.json()["results"][0]["score"] is True
    assert httpx.get(guarded.url + "/health").json() == {"status": "ok"}  # for health checks


def test_a_token_service_answers_any_host_name(guarded: LiveService) -> None:
    answered = post(guarded.url, authorization=f"Bearer {TOKEN}", host="evaluators.example.com")
    assert answered.status_code == 200


def test_without_a_token_only_loopback_host_names_are_answered(open_loopback: LiveService) -> None:
    assert post(open_loopback.url).status_code == 200
    assert post(open_loopback.url, host="localhost:1234").status_code == 200
    for host in ("attacker.example", "10.0.0.5:8766", "127.0.0.1.attacker.example"):
        refused = post(open_loopback.url, host=host)  # a rebound DNS name reaching 127.0.0.1
        assert refused.status_code == 403 and "not a loopback address" in refused.json()["detail"]


def test_bodies_over_the_limit_are_refused_declared_or_chunked(guarded: LiveService) -> None:
    auth = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    big = json.dumps({"run": {"outputs": {"answer": "x" * 5000}}}).encode()
    declared = httpx.post(guarded.url + EVALUATE, content=big, headers=auth)
    assert declared.status_code == 413 and "limit of 4096 bytes" in declared.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the size is only known while reading
        for start in range(0, len(big), 1000):
            yield big[start : start + 1000]

    chunked = httpx.post(guarded.url + EVALUATE, content=chunks(), headers=auth)
    assert chunked.status_code == 413
    small = httpx.post(guarded.url + EVALUATE, content=iter([BODY]), headers=auth)
    assert small.status_code == 200  # a chunked body within the limit reaches the evaluator


def test_responses_carry_no_sniff_and_no_store(open_loopback: LiveService) -> None:
    answered = post(open_loopback.url)
    assert answered.headers["x-content-type-options"] == "nosniff"
    assert answered.headers["cache-control"] == "no-store"


def test_a_malformed_request_is_a_422_naming_the_field(open_loopback: LiveService) -> None:
    refused = post(open_loopback.url, body=b'{"run": {"start_time": "yesterday"}}')
    assert refused.status_code == 422
    assert ["body", "run", "start_time"] in [error["loc"] for error in refused.json()["detail"]]


# --- the command, in a real process ------------------------------------------------------

EVALS_MODULE = """
def exact(outputs, reference_outputs):
    return outputs.get("answer") == reference_outputs.get("answer")

EVALUATORS = {"exact": exact}
"""


def serve_command(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    (tmp_path / "my_evals.py").write_text(EVALS_MODULE)
    return subprocess.Popen(
        [sys.executable, "-m", "assay.cli", "serve-evaluators", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "ASSAY_SERVICE_TOKEN": "", **(env or {})},
    )


def wait_for_port(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"serve-evaluators exited early:\n{process.communicate()[0]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("serve-evaluators did not open its port within 30 s")


@pytest.mark.slow
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20"])
def test_a_non_loopback_bind_without_a_token_is_refused(tmp_path: Path, host: str) -> None:
    process = serve_command(tmp_path, "my_evals:EVALUATORS", "--host", host, "--port", str(free_port()))
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 2
    assert f"refusing to serve on {host!r} without a token" in output
    assert "ASSAY_SERVICE_TOKEN" in output


@pytest.mark.slow
def test_a_weak_token_is_refused(tmp_path: Path) -> None:
    process = serve_command(tmp_path, "my_evals:EVALUATORS", "--host", "0.0.0.0", "--token", "short")
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 2 and "at least 8 characters" in output


@pytest.mark.slow
def test_a_public_bind_with_a_token_serves_and_demands_it(tmp_path: Path) -> None:
    port = free_port()
    process = serve_command(
        tmp_path,
        "my_evals:EVALUATORS",
        "--host",
        "0.0.0.0",
        "--port",
        str(port),
        env={"ASSAY_SERVICE_TOKEN": TOKEN},
    )
    try:
        wait_for_port(port, process)
        base = f"http://127.0.0.1:{port}"
        assert post(base).status_code == 401
        answered = post(base, authorization=f"Bearer {TOKEN}")
        assert answered.status_code == 200 and answered.json()["results"][0]["score"] is True
        listed = httpx.get(base + "/evaluators", headers={"authorization": f"Bearer {TOKEN}"})
        assert listed.json() == [{"name": "exact", "is_async": False}]
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=10)
    assert f"assay evaluators on http://0.0.0.0:{port}/ (1: exact) (token required)" in output
    assert TOKEN not in output


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("my_evals", "expected MODULE:EVALUATORS"),
        ("no_such_module:EVALUATORS", "no module 'no_such_module'"),
        ("my_evals:MISSING", "has no attribute 'MISSING'"),
        ("my_evals:exact", "is a function; expected a dict"),
    ],
)
def test_a_bad_spec_is_refused_naming_what_is_wrong(tmp_path: Path, spec: str, message: str) -> None:
    process = serve_command(tmp_path, spec, "--port", str(free_port()))
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 2 and message in output, output
