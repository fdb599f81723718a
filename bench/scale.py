"""A million rows on one machine: rate, memory and store size by size, the plain-loop floor,
LangSmith side by side, the SIGKILL loss, and the UI over the largest experiment.

    .venv/bin/python bench/scale.py                       # 10k and 100k
    .venv/bin/python bench/scale.py --sizes 10000 100000 1000000
    .venv/bin/python bench/scale.py --only floor,langsmith   # parts: sizes, floor, langsmith, crash, ui, ramp, stream
    .venv/bin/python bench/scale.py --only stream --stream-rows 1000000

The workload is the core benchmark's (bench/core_throughput.py): a trivial target, two row
evaluators, one summary evaluator taking ``outputs`` and ``reference_outputs``, SQLite.
Every size runs in a fresh process, so its peak RSS is its own: the dataset import in one
(streamed through ``Store.add_examples`` from a generator), the experiment in another.
LangSmith (``pip install -e '.[bench]'``) runs in local mode (``upload_results=False``,
default settings otherwise) against a client whose API address is a closed loopback port.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _rounds import compile_bytecode

HERE = Path(__file__).resolve().parent
CRASH_CHILD = HERE.parent / "tests" / "evaluation" / "_crash_run.py"


def target(inputs: dict) -> dict:
    return {"answer": inputs["x"] * 2}


def doubled(outputs: dict, reference_outputs: dict) -> bool:
    return outputs["answer"] == reference_outputs["answer"]


def positive(outputs: dict) -> float:
    return 1.0 if outputs["answer"] >= 0 else 0.0


def accuracy(outputs: Any, reference_outputs: Any) -> float:
    return sum(o["answer"] == r["answer"] for o, r in zip(outputs, reference_outputs)) / len(outputs)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# children: one measurement each, printed as one JSON line
def children_cpu() -> float:
    """CPU seconds of this process's ended children: the run's SQLite writer process."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child_import(n: int, db: str) -> dict[str, Any]:
    from assay import Client
    from assay.schemas import Example

    client = Client(db)
    dataset = client.create_dataset("bench")
    started = time.perf_counter()
    examples = (Example(inputs={"x": i}, outputs={"answer": 2 * i}) for i in range(n))
    client.store.add_examples(dataset.id, examples)
    return {"seconds": time.perf_counter() - started, "peak_mb": peak_mb()}


def child_run(n: int, db: str) -> dict[str, Any]:
    from assay import Client, evaluate

    client = Client(db)
    started, cpu, writer = time.perf_counter(), time.process_time(), children_cpu()
    results = evaluate(
        target,
        data="bench",
        evaluators=[doubled, positive],
        summary_evaluators=[accuracy],
        client=client,
        progress=False,
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    writer = children_cpu() - writer
    assert results.summary_results.results[0].score == 1.0
    run_peak = peak_mb()
    started = time.perf_counter()
    again = client.read_experiment(results.experiment_name)
    assert len(again) == n and again.aggregate["doubled"].n == n
    read_s = time.perf_counter() - started
    client.close()
    size = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
    return {
        "rows_per_s": n / elapsed,
        "cpu_us_per_row": cpu / n * 1e6,
        "writer_us_per_row": writer / n * 1e6,
        "peak_mb": run_peak,
        "db_mb": size / 2**20,
        "read_s": read_s,
        "name": results.experiment_name,
    }


def child_floor(n: int, db: str) -> dict[str, Any]:
    """The plain loop: the same data shape (uuids, timestamps, JSON, a run and two result
    rows a row, assay's schema and indexes), one transaction, no framework."""
    import uuid
    from datetime import datetime, timezone

    import orjson

    from assay.store import open_store

    open_store(db).close()  # the schema
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    experiment = str(uuid.uuid4())
    conn.execute(
        "INSERT INTO experiments (id, name, status, created_at) VALUES (?, 'floor', 'running', ?)",
        (experiment, datetime.now(timezone.utc).isoformat()),
    )
    started = time.perf_counter()
    conn.execute("BEGIN")
    for i in range(n):
        run_id, begin = str(uuid.uuid4()), datetime.now(timezone.utc)
        inputs = {"x": i}
        outputs = target(inputs)
        end = datetime.now(timezone.utc)
        conn.execute(
            "INSERT INTO runs (id, experiment_id, example_id, repetition, position, name, run_type, "
            "inputs, outputs, start_time, end_time, latency_ms) VALUES (?, ?, ?, 0, ?, 'target', "
            "'chain', ?, ?, ?, ?, ?)",
            (
                run_id,
                experiment,
                str(uuid.uuid4()),
                i,
                orjson.dumps(inputs).decode(),
                orjson.dumps(outputs).decode(),
                begin.isoformat(),
                end.isoformat(),
                (end - begin).total_seconds() * 1000,
            ),
        )
        for key, score in (("doubled", float(outputs["answer"] == 2 * i)), ("positive", 1.0)):
            conn.execute(
                "INSERT INTO results (experiment_id, run_id, key, score) VALUES (?, ?, ?, ?)",
                (experiment, run_id, key, score),
            )
    conn.execute("COMMIT")
    return {"rows_per_s": n / (time.perf_counter() - started)}


def child_langsmith(n: int, db: str) -> dict[str, Any]:
    import uuid
    from datetime import datetime, timezone

    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    dataset = uuid.uuid4()
    examples = [
        Example(
            id=uuid.uuid4(),
            dataset_id=dataset,
            inputs={"x": i},
            outputs={"answer": 2 * i},
            created_at=datetime.now(timezone.utc),
        )
        for i in range(n)
    ]
    client = Client(api_key="unused", api_url="http://127.0.0.1:9")  # nothing listens there
    started = time.perf_counter()
    results = evaluate(
        target,
        data=examples,
        evaluators=[doubled, positive],
        summary_evaluators=[accuracy],
        upload_results=False,
        client=client,
    )
    rows = sum(1 for _ in results)
    assert rows == n
    return {"rows_per_s": n / (time.perf_counter() - started)}


RAMP_WAIT_S, RAMP_THREADS = 0.05, 256


def waits(inputs: dict) -> dict:
    time.sleep(RAMP_WAIT_S)  # a model call: the thread waits, the GIL is free
    return {"answer": inputs["x"] * 2}


def child_ramp(n: int, db: str) -> dict[str, Any]:
    """Latency-bound rows (50 ms each) at max_concurrency=256: the rate against the
    ideal one (every wave of 256 rows takes 50 ms), and the CPU per row."""
    from assay import Client, evaluate

    client = Client(db)
    client.create_dataset("ramp")
    client.create_examples(inputs=[{"x": i} for i in range(n)], dataset_name="ramp")
    started, cpu = time.perf_counter(), time.process_time()
    evaluate(
        waits, data="ramp", evaluators=[positive], client=client, max_concurrency=RAMP_THREADS, progress=False
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    ideal = math.ceil(n / RAMP_THREADS) * RAMP_WAIT_S
    return {"seconds": elapsed, "ideal_s": ideal, "cpu_us_per_row": cpu / n * 1e6}


def child_first_second(n: int, db: str) -> dict[str, Any]:
    """The same rows, n of them (enough for 2 s at the ideal rate): how many are finished
    (their evaluator ran) within the first second of the ``evaluate`` call, and at what
    rate in its second half, against the ideal rate (256 rows every 50 ms)."""
    from assay import Client, evaluate

    finished: list[float] = []

    def timed(outputs: dict) -> float:
        finished.append(time.perf_counter())  # list.append is atomic: no lock needed
        return positive(outputs)

    client = Client(db)
    client.create_dataset("ramp")
    client.create_examples(inputs=[{"x": i} for i in range(n)], dataset_name="ramp")
    started = time.perf_counter()
    evaluate(
        waits, data="ramp", evaluators=[timed], client=client, max_concurrency=RAMP_THREADS, progress=False
    )
    ideal_per_s = RAMP_THREADS / RAMP_WAIT_S
    offsets = [t - started for t in finished]
    first = sum(1 for t in offsets if t <= 1.0)
    second_half = sum(1 for t in offsets if 0.5 < t <= 1.0)
    return {"first_second": first / ideal_per_s, "second_half": second_half / (ideal_per_s / 2)}


def child_stream(n: int, path: str) -> dict[str, Any]:
    """``evaluate(data="file.jsonl")``'s import of a file of n lines: time and peak RSS."""
    from assay import Client
    from assay.evaluation._data import resolve_data

    client = Client(str(Path(path).with_suffix(".db")))
    started = time.perf_counter()
    resolved = resolve_data(path, client.store)
    assert resolved.count == n
    return {"seconds": time.perf_counter() - started, "peak_mb": peak_mb()}


def child_create(n: int, db: str) -> dict[str, Any]:
    """``Client.create_examples`` fed by generators of n examples: time and peak RSS."""
    from assay import Client

    client = Client(db)
    client.create_dataset("created")
    started = time.perf_counter()
    response = client.create_examples(
        inputs=({"x": i, "q": f"question {i}"} for i in range(n)),
        outputs=({"answer": 2 * i} for i in range(n)),
        dataset_name="created",
    )
    assert response["count"] == n
    return {"seconds": time.perf_counter() - started, "peak_mb": peak_mb()}


CHILDREN = {
    "stream": child_stream,
    "create": child_create,
    "import": child_import,
    "run": child_run,
    "floor": child_floor,
    "langsmith": child_langsmith,
    "ramp": child_ramp,
    "first_second": child_first_second,
}


def in_child(kind: str, n: int, db: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(n), str(db)],
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# the parts
def sizes(ns: list[int], folder: Path) -> tuple[dict[int, dict[str, Any]], Path]:
    print(
        f"{'rows':>9} {'import s':>9} {'import MB':>10} {'rows/s':>9} {'CPU us/row':>11} "
        f"{'writer us':>10} {'peak MB':>8} {'DB MB':>7} {'read s':>7}"
    )
    figures, db = {}, folder
    for n in ns:
        db = folder / f"scale-{n}.db"
        imported = in_child("import", n, db)
        ran = in_child("run", n, db)
        figures[n] = {**ran, "import": imported}
        print(
            f"{n:9,} {imported['seconds']:9.1f} {imported['peak_mb']:10.0f} {ran['rows_per_s']:9,.0f} "
            f"{ran['cpu_us_per_row']:11.0f} {ran['writer_us_per_row']:10.0f} {ran['peak_mb']:8.0f} "
            f"{ran['db_mb']:7.0f} {ran['read_s']:7.2f}"
        )
    if len(ns) > 1:
        first, last = figures[ns[0]], figures[ns[-1]]
        print(
            f"rate at {ns[-1]:,} / rate at {ns[0]:,}: {last['rows_per_s'] / first['rows_per_s']:.2f} "
            f"(CPU per row: {first['cpu_us_per_row'] / last['cpu_us_per_row']:.2f})"
        )
    return figures, db


def floor_and_langsmith(n: int, folder: Path, parts: set[str], rounds: int) -> None:
    """assay, the floor and LangSmith, interleaved round by round (the machine's speed
    drifts); the ratios of each round's figures, then their median."""
    rates: dict[str, list[float]] = {"assay": [], "floor": [], "langsmith": []}
    loads = []
    for round_ in range(rounds):
        db = folder / f"core-{round_}.db"
        in_child("import", n, db)
        loads.append(os.getloadavg()[0])
        rates["assay"].append(in_child("run", n, db)["rows_per_s"])
        rates["floor"].append(in_child("floor", n, folder / f"floor-{round_}.db")["rows_per_s"])
        line = f"  round {round_ + 1}: assay {rates['assay'][-1]:,.0f}, floor {rates['floor'][-1]:,.0f}"
        if "langsmith" in parts:
            rates["langsmith"].append(in_child("langsmith", n, db)["rows_per_s"])
            line += f", LangSmith {rates['langsmith'][-1]:,.0f}"
        print(line + f" rows/s (load average {loads[-1]:.1f})", flush=True)
    median = {name: statistics.median(values) for name, values in rates.items() if values}
    floor_ratio = statistics.median(a / f for a, f in zip(rates["assay"], rates["floor"]))
    print(
        f"\n{n:,} rows, median of {rounds} interleaved rounds (load average {min(loads):.1f}-{max(loads):.1f}): "
        f"assay {median['assay']:,.0f} rows/s, plain-loop floor {median['floor']:,.0f} rows/s: "
        f"ratio {floor_ratio:.2f} (best round {max(a / f for a, f in zip(rates['assay'], rates['floor'])):.2f})"
    )
    if "langsmith" in median:
        times = [a / ls for a, ls in zip(rates["assay"], rates["langsmith"])]
        print(
            f"LangSmith local mode {median['langsmith']:,.0f} rows/s: assay is "
            f"{statistics.median(times):.1f}x (best round {max(times):.1f}x)"
        )


def ramp(n: int, folder: Path) -> None:
    print(f"\n{n:,} rows that wait {RAMP_WAIT_S * 1000:.0f} ms each, max_concurrency={RAMP_THREADS}:")
    _rounds(
        "ramp",
        n,
        folder,
        lambda got: (
            f"{got['seconds']:.2f} s against the ideal {got['ideal_s']:.2f} s: "
            f"{got['ideal_s'] / got['seconds']:.0%} of the ideal rate, {got['cpu_us_per_row']:.0f} us of CPU a row"
        ),
    )
    rows = 2 * RAMP_THREADS * round(1 / RAMP_WAIT_S)
    print(f"{rows:,} such rows (2 s at the ideal rate), rows finished within the first second of the call:")
    _rounds(
        "first_second",
        rows,
        folder,
        lambda got: (
            f"{got['first_second']:.0%} of the ideal rate over the whole first second, "
            f"{got['second_half']:.0%} over its second half"
        ),
    )


def _rounds(kind: str, n: int, folder: Path, line: Callable[[dict[str, Any]], str], count: int = 3) -> None:
    """``count`` runs of a child part, each in a fresh process and store, a line each."""
    for round_ in range(count):
        print("  " + line(in_child(kind, n, folder / f"{kind}-{round_}.db")))


def stream(n: int, folder: Path) -> None:
    path = folder / "stream.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(
                json.dumps({"inputs": {"x": i, "q": f"question {i}"}, "outputs": {"answer": 2 * i}}) + "\n"
            )
    got = in_child("stream", n, path)
    print(
        f"\nevaluate(data=<{n:,}-line .jsonl, {path.stat().st_size / 2**20:.0f} MB>) import: "
        f"{got['seconds']:.1f} s, peak RSS {got['peak_mb']:.0f} MB"
    )
    got = in_child("create", n, folder / "created.db")
    print(
        f"client.create_examples(<generators of {n:,} examples>): {got['seconds']:.1f} s, "
        f"peak RSS {got['peak_mb']:.0f} MB"
    )


def crash(n: int, folder: Path) -> None:
    """A run of n rows SIGKILLed at a random point; lost = reported finished, not stored."""
    db, side = folder / "crash.db", folder / "crash-finished.txt"
    child = subprocess.Popen([sys.executable, str(CRASH_CHILD), str(db), str(side), str(n)])
    at = random.uniform(0.3, 0.8) * n
    while child.poll() is None and not (side.exists() and side.stat().st_size >= at * 22):
        time.sleep(0.005)
    killed_at = time.time()
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    from assay.store.sqlite._writer_process import settle_writers_of

    settle_writers_of(str(db), child.pid)  # its writer process commits what it was handed
    finished = {}
    for line in side.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and len(parts[1]) > 7:
            finished[int(parts[0])] = float(parts[1])
    with sqlite3.connect(db) as conn:
        stored = {row[0] for row in conn.execute("SELECT position FROM runs")}
    lost = [killed_at - at for x, at in finished.items() if x not in stored]
    oldest = max(lost, default=0.0)
    recent = sum(1 for at in finished.values() if at > killed_at - 0.1)
    print(
        f"\nSIGKILL after {len(finished):,} of {n:,} rows finished: {len(lost):,} lost "
        f"({len(finished) - len(lost):,} stored); the oldest lost row had finished "
        f"{oldest:.2f} s before the kill; {recent:,} rows finished in the last 0.1 s"
    )


def ui(db: Path, name: str, rows: int) -> None:
    sys.path.insert(0, str(HERE))
    import httpx
    from ui_first_page import _wait, free_port, measure

    port = free_port()
    code = f"from assay.ui import serve; serve({f'sqlite:///{db}'!r}, port={port})"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait(port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            run_id = client.get(f"/api/experiments/{name}/rows").json()["rows"][0]["run_id"]
            pages = [
                ("experiment page (with its first rows)", f"/experiments/{name}", 300),
                ("first page of rows (JSON)", f"/api/experiments/{name}/rows", 100),
                (
                    "sorted by a metric, descending",
                    f"/api/experiments/{name}/rows?sort=metric:positive&order=desc",
                    1000,
                ),
                ("sorted by latency", f"/api/experiments/{name}/rows?sort=latency", 1000),
                ("failed rows only", f"/api/experiments/{name}/rows?failed=true", 1000),
                ("one row", f"/experiments/{name}/rows/{run_id}", 50),
                ("experiment list", "/experiments", 300),
            ]
            print(
                f"\nUI over {rows:,} rows {'':18} {'cold':>8} {'median':>8} {'p95':>8} {'budget':>7} (ms, server time)"
            )
            for label, path, budget in pages:
                cold, median, p95, _ = measure(client, path, 5)
                print(f"{label:45} {cold:8.1f} {median:8.1f} {p95:8.1f} {budget:7}")
        status = Path(f"/proc/{process.pid}/status").read_text()
        hwm = next(line for line in status.splitlines() if line.startswith("VmHWM"))
        print(f"server peak RSS: {int(hwm.split()[1]) / 1024:.0f} MB")
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--core", type=int, default=10_000, help="rows for floor and LangSmith")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of floor and LangSmith")
    parser.add_argument("--crash-rows", type=int, default=100_000)
    parser.add_argument("--ramp-rows", type=int, default=2_000)
    parser.add_argument("--stream-rows", type=int, default=100_000)
    parser.add_argument("--only", default="sizes,floor,langsmith,crash,ui,ramp,stream")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "N", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, n, db = args.child
        print(json.dumps(CHILDREN[kind](int(n), db)))
        return
    parts = set(args.only.split(","))
    compile_bytecode()  # as an installed assay has it, and LangSmith's package
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (a shared machine)")
    with tempfile.TemporaryDirectory() as folder:
        if "sizes" in parts:
            figures, largest = sizes(args.sizes, Path(folder))
            if "ui" in parts:
                ui(largest, figures[args.sizes[-1]]["name"], args.sizes[-1])
        if "floor" in parts:
            floor_and_langsmith(args.core, Path(folder), parts, args.rounds)
        if "crash" in parts:
            crash(args.crash_rows, Path(folder))
        if "ramp" in parts:
            ramp(args.ramp_rows, Path(folder))
        if "stream" in parts:
            stream(args.stream_rows, Path(folder))


if __name__ == "__main__":
    main()
