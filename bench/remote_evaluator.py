"""The remote evaluator's added latency per call: RemoteEvaluator vs the same evaluator local.

    .venv/bin/python bench/remote_evaluator.py [--calls N]

Starts ``assay serve-evaluators --builtin exact_match,code_correctness`` in its own process
on 127.0.0.1 (with a token, as a shared deployment would run), then makes N sequential
calls of each evaluator locally and through ``RemoteEvaluator`` (after a warm-up), and
prints the median and p95 per call and the difference: what the HTTP hop, the wire codec
and the server add.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

from assay.evaluation._binding import bind_row_evaluator
from assay.evaluation._names import resolve_evaluator_name
from assay.schemas import Example, Run
from assay.service import RemoteEvaluator

TOKEN = "bench-token-123456"
ROWS = {
    "exact_match": (Run(outputs={"output": "Paris"}), Example(outputs={"output": "Paris"})),
    "code_correctness": (
        Run(outputs={"text": "def solution(n):\n    return n * n"}),
        Example(inputs={"test_cases": [{"input": i, "expected_output": i * i} for i in range(3)]}),
    ),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assay.cli",
            "serve-evaluators",
            "--builtin",
            ",".join(ROWS),
            "--port",
            str(port),
            "--token",
            TOKEN,
        ],
        stdout=subprocess.DEVNULL,
        env={**os.environ},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.05)
    process.kill()
    raise SystemExit("the service did not start within 60 s")


async def timings(evaluator: Any, run: Run, example: Example, calls: int) -> list[float]:
    bound = bind_row_evaluator(evaluator)

    async def once() -> None:
        if bound.is_async:
            [result] = await bound.call_async(run, example)
        else:
            [result] = await asyncio.to_thread(bound.call_sync, run, example)
        assert result.error is None and result.score, result

    for _ in range(5):
        await once()  # warm-up: connections, sandbox pool, imports
    spent = []
    for _ in range(calls):
        started = time.perf_counter()
        await once()
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    port = free_port()
    server = start_server(port)
    try:
        print(
            f"{'evaluator':<18} {'local med':>10} {'local p95':>10} {'remote med':>11} "
            f"{'remote p95':>11} {'added med':>10} {'added p95':>10}   (ms, {args.calls} calls)"
        )
        for name, (run, example) in ROWS.items():
            local = asyncio.run(timings(resolve_evaluator_name(name), run, example, args.calls))
            remote_evaluator = RemoteEvaluator(f"http://127.0.0.1:{port}", name, token=TOKEN)
            remote = asyncio.run(timings(remote_evaluator, run, example, args.calls))
            lm, lp, rm, rp = statistics.median(local), p95(local), statistics.median(remote), p95(remote)
            print(
                f"{name:<18} {lm:>10.2f} {lp:>10.2f} {rm:>11.2f} {rp:>11.2f} {rm - lm:>10.2f} {rp - lp:>10.2f}"
            )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
