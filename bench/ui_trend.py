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
import shutil
import statistics
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


def timed(client: httpx.Client, dataset_id: str) -> float:
    answer = client.get(f"/datasets/{dataset_id}")
    answer.raise_for_status()
    return server_ms(answer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=50)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--before", help="another checkout's src folder, asked alternately")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        paths = {"this code": Path(folder) / "trend.db"}
        ids = build(paths["this code"], args.experiments, args.rows)
        if args.before:
            paths["before"] = Path(folder) / "before.db"
            shutil.copy(paths["this code"], paths["before"])
        clients = {
            side: stack.enter_context(
                httpx.Client(
                    base_url=stack.enter_context(served(path, args.before if side == "before" else None))
                )
            )
            for side, path in paths.items()
        }
        print(f"dataset page, {args.rows} rows per experiment; server ms ({args.repeat} warm views)")
        print(f"{'':42} {'median':>8} {'max':>8}   budget {BUDGET_MS:.0f}")
        for label, dataset_id in (
            ("1 experiment", ids["one"]),
            (f"{args.experiments} experiments", ids["many"]),
        ):
            cold = {side: timed(client, dataset_id) for side, client in clients.items()}
            warm: dict[str, list[float]] = {side: [] for side in clients}
            for _ in range(args.repeat):
                for side, client in clients.items():
                    warm[side].append(timed(client, dataset_id))
            for side in clients:
                print(f"{label + ', first view (' + side + ')':42} {cold[side]:8.1f}")
                print(
                    f"{label + ', warm (' + side + ')':42} {statistics.median(warm[side]):8.1f} {max(warm[side]):8.1f}"
                )
        added: dict[str, list[float]] = {side: [] for side in clients}
        for k in range(args.experiments, args.experiments + 3):
            for side, client in clients.items():
                store = open_store(str(paths[side]))
                add_experiment(store, "many", k, args.rows)
                store.close()
                added[side].append(timed(client, ids["many"]))
        for side in clients:
            values = added[side]
            print(
                f"{'after one more experiment (' + side + ')':42} {statistics.median(values):8.1f} {max(values):8.1f}"
            )


if __name__ == "__main__":
    main()
