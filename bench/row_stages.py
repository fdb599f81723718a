"""CPU per row, stage by stage: the core benchmark's row path run on one thread.

    .venv/bin/python bench/row_stages.py [N] [--repeat R]

Builds an experiment the way ``evaluate`` does (the core benchmark's target, two row
evaluators, SQLite), then times each stage of a row over N rows with no other thread
running: reading the example (the feed), the target, the evaluators, the row record,
encoding it for the store, its tally, the writer's insert (batches of 1,000) and the
tally's add. Prints the best of R rounds per stage in microseconds a row; the sum is the
floor of what one experiment row costs before threads, the summary pass and the figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from core_throughput import doubled, positive, target

from assay import Client
from assay.evaluation._api import _options, _prepare
from assay.evaluation._tally import tally_row

STAGES = ("feed", "target", "evaluators", "row", "encode", "tally_row", "insert", "tally_add")


def _options_for(client: Client, name: str) -> Any:
    given = dict(
        data="bench",
        evaluators=[doubled, positive],
        summary_evaluators=None,
        metadata=None,
        experiment_prefix=None,
        description=None,
        max_concurrency=1,
        num_repetitions=1,
        client=client,
        blocking=True,
        experiment=name,
        upload_results=None,
        upload_runs=None,
        error_handling="log",
        resume=False,
        progress=False,
        shard=None,
        wait_for_lease=False,
        executor=None,
        retry_errors=False,
        max_cost=None,
        randomize_order=False,
    )
    return _options(given)


def one_round(n: int, folder: Path, index: int) -> dict[str, float]:
    client = Client(str(folder / f"stages-{index}.db"))
    client.create_dataset("bench")
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name="bench",
    )
    prepared = _prepare(target, _options_for(client, f"stages-{index}"))
    pipeline, feed, store, exp = prepared.pipeline, prepared.feed, prepared.store, prepared.record.id
    clock = time.thread_time  # CPU time: a loaded machine preempts; ~1 us a call, subtracted below
    spent = dict.fromkeys(STAGES, 0.0)
    batch: list[Any] = []
    tallies: list[Any] = []
    while True:
        t0 = clock()
        planned = feed.next()
        t1 = clock()
        if planned is None:
            break
        run = pipeline.target.run_sync(planned.example, planned.repetition)
        t2 = clock()
        results = pipeline._evaluate_sync(run, planned.example)
        t3 = clock()
        row = pipeline._row(planned, run, results)
        t4 = clock()
        batch.append(store.prepare_row(exp, row))
        t5 = clock()
        tallies.append(tally_row(row))
        t6 = clock()
        for name, a, b in zip(STAGES, (t0, t1, t2, t3, t4, t5), (t1, t2, t3, t4, t5, t6)):
            spent[name] += b - a
        if len(batch) == 1000:
            t7 = clock()
            store.write_batch(exp, batch, None)
            t8 = clock()
            for one in tallies:
                prepared.tally.add(one)
            spent["insert"] += t8 - t7
            spent["tally_add"] += clock() - t8
            batch, tallies = [], []
    client.close()
    return {name: seconds / n * 1e6 for name, seconds in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.repeat):
            for name, us in one_round(args.n, Path(folder), index).items():
                best[name] = min(us, best.get(name, us))
    for name in STAGES:
        print(f"{name:>11} {best[name]:7.1f} us/row")
    print(f"{'sum':>11} {sum(best.values()):7.1f} us/row (best of {args.repeat} rounds of {args.n:,} rows)")


if __name__ == "__main__":
    main()
