"""How fast a dataset page charts its metrics across 50 experiments (each paired with
the one before it), against the same page with one experiment, in one run.

    .venv/bin/python bench/ui_trend.py [--experiments 50] [--rows 200] [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ui"))

from fastapi.testclient import TestClient  # noqa: E402
from ui_testdata import RowSpec, make_dataset, make_experiment  # noqa: E402

from assay.store import open_store  # noqa: E402
from assay.ui import create_app  # noqa: E402

BUDGET_MS = 300.0
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=50)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(str(Path(folder) / "trend.db"))
        ids = []
        for name, count in (("one", 1), ("many", args.experiments)):
            dataset, examples = make_dataset(store, name, [{"inputs": {"q": i}} for i in range(args.rows)])
            ids.append(str(dataset.id))
            for k in range(count):
                rows = [
                    RowSpec(
                        outputs={"a": i},
                        scores={"correct": int((i + k) % 5 != 0), "quality": ((i * k) % 10) / 10},
                    )
                    for i in range(args.rows)
                ]
                make_experiment(
                    store, f"{name}-{k}", dataset, examples, rows, created=T0 + timedelta(hours=k)
                )
        with TestClient(create_app(store), base_url="http://127.0.0.1") as client:
            print(
                f"dataset page, {args.rows} rows per experiment; server ms over {args.repeat} warm requests"
            )
            for label, dataset_id in (("1 experiment", ids[0]), (f"{args.experiments} experiments", ids[1])):
                client.get(f"/datasets/{dataset_id}")
                times = sorted(
                    float(client.get(f"/datasets/{dataset_id}").headers["server-timing"].split("dur=")[1])
                    for _ in range(args.repeat)
                )
                print(
                    f"{label:16} median {statistics.median(times):8.1f}   max {times[-1]:8.1f}   budget {BUDGET_MS:.0f}"
                )
        store.close()


if __name__ == "__main__":
    main()
