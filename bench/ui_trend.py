"""How fast a dataset page charts its metrics across 50 experiments (each paired with
the one before it), against the same page with one experiment, over HTTP against the
real server (``assay.ui.serve`` in its own process), as a browser asks for it.

Prints the server's time (Server-Timing) for the first view after a start, warm views,
and the view after one more experiment is added (one new pair to compare). With
``--before SRC`` (another checkout's ``src``, e.g. ``/work/main/src``) a second server
runs that code on a copy of the store and the two are asked alternately, in one run.

    .venv/bin/python bench/ui_trend.py [--experiments 50] [--rows 200] [--repeat 10] [--before SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
from ui_first_page import served, server_ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ui"))

from ui_testdata import RowSpec, make_dataset, make_experiment  # noqa: E402

from assay.store import Store, open_store  # noqa: E402

BUDGET_MS = 300.0
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def add_experiment(store: Store, name: str, k: int, rows: int) -> None:
    dataset = next(d for d in store.list_datasets() if d.name == name)
    examples = store.list_examples(dataset.id)
    specs = [
        RowSpec(outputs={"a": i}, scores={"correct": int((i + k) % 5 != 0), "quality": ((i * k) % 10) / 10})
        for i in range(rows)
    ]
    created = T0 + timedelta(hours=k)
    make_experiment(store, f"{name}-{k}", dataset, examples, specs, created=created, figures=True)


def build(path: Path, experiments: int, rows: int) -> dict[str, str]:
    """Two datasets, "one" with 1 experiment and "many" with ``experiments``: their ids."""
    store = open_store(str(path))
    ids = {}
    for name, count in (("one", 1), ("many", experiments)):
        dataset, _ = make_dataset(store, name, [{"inputs": {"q": i}} for i in range(rows)])
        ids[name] = str(dataset.id)
        for k in range(count):
            add_experiment(store, name, k, rows)
    store.close()
    return ids


def timed(client: httpx.Client, path: str) -> float:
    answer = client.get(path)
    answer.raise_for_status()
    return server_ms(answer)


def on_side(source: str | None, *command: str) -> None:
    """Run this script's ``command`` (``--build-only`` or ``--add-only``) with ``source``'s
    code: each side's store is written by its own code (an older assay cannot open a
    store a newer one migrated)."""
    env = {**os.environ, "PYTHONPATH": source} if source else None
    subprocess.run([sys.executable, __file__, *command], check=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=50)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--before", help="another checkout's src folder, asked alternately")
    parser.add_argument("--build-only", help=argparse.SUPPRESS)  # PATH: build, print the ids
    parser.add_argument("--add-only", nargs=2, help=argparse.SUPPRESS)  # PATH K: one more experiment
    args = parser.parse_args()
    if args.build_only:
        print(json.dumps(build(Path(args.build_only), args.experiments, args.rows)))
        return
    if args.add_only:
        store = open_store(args.add_only[0])
        add_experiment(store, "many", int(args.add_only[1]), args.rows)
        store.close()
        return
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        sources = {"this code": None, **({"before": args.before} if args.before else {})}
        paths = {side: Path(folder) / f"{side.replace(' ', '-')}.db" for side in sources}
        sizes = ("--experiments", str(args.experiments), "--rows", str(args.rows))
        for side, source in sources.items():
            on_side(source, "--build-only", str(paths[side]), *sizes)
        clients = {
            side: stack.enter_context(httpx.Client(base_url=stack.enter_context(served(paths[side], source))))
            for side, source in sources.items()
        }
        print(f"dataset page, {args.rows} rows per experiment; server ms ({args.repeat} warm views)")
        print(f"{'':42} {'median':>8} {'max':>8}   budget {BUDGET_MS:.0f}")
        for label, name in (("1 experiment", "one"), (f"{args.experiments} experiments", "many")):
            path_of = {side: f"/datasets/{name}" for side in clients}
            cold = {side: timed(client, path_of[side]) for side, client in clients.items()}
            warm: dict[str, list[float]] = {side: [] for side in clients}
            for _ in range(args.repeat):
                for side, client in clients.items():
                    warm[side].append(timed(client, path_of[side]))
            for side in clients:
                print(f"{label + ', first view (' + side + ')':42} {cold[side]:8.1f}")
                print(
                    f"{label + ', warm (' + side + ')':42} {statistics.median(warm[side]):8.1f} {max(warm[side]):8.1f}"
                )
        added: dict[str, list[float]] = {side: [] for side in clients}
        for k in range(args.experiments, args.experiments + 3):
            for side, client in clients.items():
                on_side(sources[side], "--add-only", str(paths[side]), str(k), "--rows", str(args.rows))
                added[side].append(timed(client, "/datasets/many"))
        for side in clients:
            values = added[side]
            print(
                f"{'after one more experiment (' + side + ')':42} {statistics.median(values):8.1f} {max(values):8.1f}"
            )


if __name__ == "__main__":
    main()
