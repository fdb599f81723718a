"""Benchmark: the judge-reliability figures of issue 42, each printed next to its goal.

1. agreement over 10,000 labelled rows (store read + statistics + 2,000 bootstrap draws):
   goal < 1 s, timed end to end through ``assay.judge_agreement``; the statistics alone too.
2. the AIMD limiter against a loopback server that allows 20 calls in flight (429 +
   Retry-After above): the limit it settles at (goal within 10% of 20, within 30 s), the
   number of 429s, and failed rows (goal 0). Printed next to a fixed limit of 48 in the
   same run, the old behaviour's shape (no adaptation).
3. both-order pairwise: the calls it makes against one random order (goal exactly 2x).

    .venv/bin/python bench/judge_reliability.py [--rows 10000] [--calls 1500]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
from pathlib import Path

import assay
from assay import evaluate_comparative
from assay.evaluators import ComparisonEvaluator, CriteriaEvaluator
from assay.llm._limits import all_limiters
from assay.stats import agreement as stats
from assay.testing import FakeOpenAIServer, RecordedRequest

VERDICT = {"reasoning": "r", "value": "Y"}


def agreement(rows: int) -> None:
    rng = random.Random(0)
    truth = [rng.randint(1, 5) for _ in range(rows)]
    judged = [min(5, max(1, t + rng.choice((-1, 0, 0, 1)))) for t in truth]
    with tempfile.TemporaryDirectory() as folder:
        client = assay.Client(database_url=f"sqlite:///{Path(folder) / 'a.db'}")
        results = assay.evaluate(
            lambda inputs: inputs,
            data=[{"inputs": {"i": i}} for i in range(rows)],
            evaluators=[lambda inputs: {"key": "rubric", "score": judged[inputs["i"]]}],
            client=client,
            experiment="labelled",
            progress=False,
        )
        for row in results:
            i = row["run"].inputs["i"]
            client.create_feedback(
                row["run"].id, "rubric_human", score=truth[i], feedback_source_type="human"
            )
        start = time.perf_counter()
        report = assay.judge_agreement("labelled", "rubric", "rubric_human", client=client)
        whole = time.perf_counter() - start
    start = time.perf_counter()
    table = stats.LabelledRows({"judge": judged, "human": truth})
    pair = table.pair("judge", "human")
    stats.estimates(
        table,
        {
            "accuracy": stats.accuracy(pair),
            "kappa": stats.cohen_kappa(pair, "quadratic"),
            "rho": stats.spearman(pair),
        },
    )
    alone = time.perf_counter() - start
    print(f"agreement, {rows:,} labelled rows (n={report.n}, weighted kappa {report.kappa.value:.3f}):")  # type: ignore[union-attr]
    print(f"  judge_agreement end to end {whole:.3f} s (goal < 1 s); statistics alone {alone:.3f} s")


def aimd(calls: int) -> None:
    print(f"rate limits, {calls:,} judge calls, server allows 20 in flight (429 + Retry-After 0.05 s above):")
    for label, ceiling in (("adaptive (AIMD)", 48), ("fixed at 20", 20)):
        with FakeOpenAIServer(handler=lambda r: VERDICT, latency=0.05, concurrency_limit=20) as server:
            model = server.chat_model(max_concurrency=ceiling, cache=False)
            start = time.perf_counter()
            samples: list[tuple[float, int]] = []
            done = threading.Event()
            watcher = threading.Thread(target=_watch, args=(server, samples, done), daemon=True)
            watcher.start()
            results = assay.evaluate(
                lambda inputs: inputs["i"],
                data=[{"inputs": {"i": i}} for i in range(calls)],
                evaluators=[CriteriaEvaluator("helpfulness", model=model)],
                client=assay.Client(database_url="sqlite://"),
                max_concurrency=64,
                progress=False,
            )
            elapsed = time.perf_counter() - start
            done.set()
            watcher.join()
            limiter = all_limiters()[(server.base_url, server.model)]
            within = next((t - start for t, c in samples if 18 <= c <= 22), None)
            mean = sum(c for _, c in samples) / len(samples) if samples else float("nan")
            metric = results.aggregate["helpfulness"]
            floor = calls / 20 * 0.05
            print(
                f"  {label:<16} settled limit {limiter.capacity:>2} (goal 18-21), peak in flight "
                f"{server.max_chats_in_flight}, 429s {server.rejected}, failed rows {metric.errors} "
                f"(goal 0), {elapsed:.2f} s vs a {floor:.2f} s floor at 20"
            )
            reached = "never" if within is None else f"after {within:.2f} s"
            print(f"  {'':<16} limit within 10% of 20 {reached} (goal < 30 s), mean limit {mean:.1f}")


def _watch(server: FakeOpenAIServer, samples: list[tuple[float, int]], done: threading.Event) -> None:
    """Sample the model's limit every 10 ms (a read from another thread: a snapshot)."""
    while not done.wait(0.01):
        limiter = all_limiters().get((server.base_url, server.model))
        if limiter is not None:
            samples.append((time.perf_counter(), limiter.capacity))


def pairwise(questions: int) -> None:
    def judge(request: RecordedRequest) -> dict[str, str]:
        return {
            "reasoning": "r",
            "preference": "A" if "GOOD" in request.text.split("[Answer B]:")[0] else "B",
        }

    counts = {}
    for orders in ("random", "both"):
        with FakeOpenAIServer(handler=judge) as server:
            client = assay.Client(database_url="sqlite://")
            client.create_dataset("qs")
            client.create_examples(inputs=[{"q": q} for q in range(questions)], dataset_name="qs")
            exps = [
                assay.evaluate(
                    lambda inputs, word=word: f"{word} {inputs['q']}",
                    data="qs",
                    client=client,
                    progress=False,
                )
                for word in ("GOOD", "bad")
            ]
            evaluate_comparative(
                exps, [ComparisonEvaluator(server.chat_model(), orders=orders)], client=client
            )  # type: ignore[arg-type]
            counts[orders] = len(server.chat_requests)
    ratio = counts["both"] / counts["random"]
    print(
        f"pairwise, {questions} questions: one order {counts['random']} calls, both orders {counts['both']} (x{ratio:.2f}, goal x2.00)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()
    agreement(args.rows)
    aimd(args.calls)
    pairwise(args.questions)


if __name__ == "__main__":
    main()
