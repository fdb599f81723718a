"""Benchmark: the summarization scorer through assay.evaluate against a 100 ms loopback judge.

The floor is examples / concurrency x 3 sequential calls x latency (500/50 x 3 x 0.1 s = 3 s);
the goal is within 1.25x of it. A second identical run must make no call and take < 1 s.
The judge server runs as its own process (``python -m assay.testing``), as a real one would;
``--server thread`` runs it inside the benchmark's process instead.

    .venv/bin/python bench/judge_pipeline.py [--examples 500] [--concurrency 50] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

import assay
from assay.llm import ChatModel
from assay.scorers import create_summarization_scorer
from assay.testing import FakeOpenAIServer, RecordedRequest

QUESTIONS = ["Was the plant opened in 1995?", "Does it make cars?", "Is it in Ohio?"]


def judge(request: RecordedRequest) -> dict[str, Any]:
    """Canned but well-formed replies for the three summarization steps."""
    if request.schema_name == "SummaryAlignment":
        return {
            "claims": [
                {"claim": "It makes cars.", "reason": "stated", "supported": True},
                {"claim": "It opened in 1995.", "reason": "stated", "supported": True},
            ]
        }
    if request.schema_name == "SummaryQuestions":
        return {"questions": QUESTIONS}
    return {
        "answers": [
            {"question": q, "reason": "in the summary", "answered": i < 2} for i, q in enumerate(QUESTIONS)
        ]
    }


def dataset(size: int) -> list[dict[str, Any]]:
    return [
        {"inputs": {"document": f"Plant {i} opened in 1995 in Ohio and makes {i} cars a day."}}
        for i in range(size)
    ]


class JudgeServer:
    """The loopback judge, in a process of its own or in a thread of this one."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def chat_requests(self) -> int:
        stats = httpx.get(self.base_url.removesuffix("/v1") + "/_assay/stats", timeout=5).json()
        return int(stats["chat_requests"])

    def model(self, concurrency: int) -> ChatModel:
        return ChatModel(
            model="fake-judge", base_url=self.base_url, api_key="sk-bench", max_concurrency=concurrency
        )


@contextlib.contextmanager
def judge_server(kind: str, latency: float) -> Iterator[JudgeServer]:
    if kind == "thread":
        with FakeOpenAIServer(handler=judge, latency=latency) as server:
            yield JudgeServer(server.base_url)
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assay.testing",
            "--latency",
            str(latency),
            "--handler",
            "judge_pipeline:judge",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        yield JudgeServer(process.stdout.readline().split()[-1])
    finally:
        process.terminate()
        process.wait(timeout=10)


def run_once(
    server: JudgeServer, client: assay.Client, args: argparse.Namespace, name: str
) -> tuple[float, int]:
    # two of the three calls run concurrently, so allow two calls per row in flight
    scorer = create_summarization_scorer(server.model(2 * args.concurrency))
    before = server.chat_requests()
    started = time.perf_counter()
    results = assay.evaluate(
        lambda inputs: {"summary": inputs["document"].split(" and ")[0]},
        data=dataset(args.examples),
        evaluators=[scorer],
        client=client,
        experiment=name,
        max_concurrency=args.concurrency,
        progress=False,
    )
    elapsed = time.perf_counter() - started
    aggregate = results.aggregate["summarization"]
    if aggregate.errors or aggregate.n != args.examples:
        raise SystemExit(f"benchmark run {name} had {aggregate.errors} errors, n={aggregate.n}")
    return elapsed, server.chat_requests() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--server", choices=("process", "thread"), default="process")
    args = parser.parse_args()
    floor = args.examples / args.concurrency * 3 * args.latency
    with tempfile.TemporaryDirectory() as folder, judge_server(args.server, args.latency) as server:
        client = assay.Client(database_url=f"sqlite:///{Path(folder) / 'bench.db'}")
        cold, cold_calls = run_once(server, client, args, "cold")
        warm, warm_calls = run_once(server, client, args, "warm")
        client.close()
    print(
        f"summarization scorer, {args.examples} examples, concurrency {args.concurrency}, "
        f"{args.latency * 1000:.0f} ms per judge call, judge server in a {args.server}"
    )
    print(f"floor (3 sequential calls per example): {floor:.2f} s")
    print(f"cold run: {cold:.2f} s, {cold_calls} calls, {cold / floor:.2f}x the floor (goal <= 1.25x)")
    # alignment and questions run concurrently, so a row waits for 2 calls, not 3
    own_floor = floor * 2 / 3
    print(
        f"          {cold / own_floor:.2f}x this pipeline's own floor of {own_floor:.2f} s "
        "(2 sequential steps)"
    )
    print(f"re-run:   {warm:.2f} s, {warm_calls} calls (goal: 0 calls, < 1 s)")


if __name__ == "__main__":
    main()
