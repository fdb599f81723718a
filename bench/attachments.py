"""Attachments in the store: what they cost to read, and what deduplication saves.

One run, both sides, alternating (timings on a shared machine are noisy: compare within
a run). A dataset of N examples without files beside one whose every example carries an
image; the images are either all the same (stored once) or each different:

- iterating the dataset's examples (what evaluate's feed does): the files are looked up
  per page and read only when a reader is asked for;
- reading every example's file once;
- the database file's size.

    .venv/bin/python bench/attachments.py [N]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from assay import Client

IMAGE_BYTES = 20_000


def build(path: Path, n: int, files: str) -> Client:
    client = Client(str(path))
    client.create_dataset("d")

    def example(i: int) -> dict[str, object]:
        made: dict[str, object] = {"inputs": {"i": i}, "outputs": {"o": i}}
        if files == "same":
            made["attachments"] = {"img": ("image/png", b"\x89PNG" + b"\x00" * IMAGE_BYTES)}
        elif files == "unique":
            made["attachments"] = {"img": ("image/png", i.to_bytes(8, "big") * (IMAGE_BYTES // 8))}
        return made

    client.create_examples(dataset_name="d", examples=(example(i) for i in range(n)))
    return client


def iterate(client: Client, read: bool) -> float:
    dataset = client.read_dataset(dataset_name="d")
    started = time.perf_counter()
    for example in client.store.iter_examples(dataset.id):
        if read and example.attachments:
            example.attachments["img"]["reader"].read()
    return time.perf_counter() - started


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as folder:
        kinds = ("none", "same", "unique")
        clients = {kind: build(Path(folder) / f"{kind}.db", n, kind) for kind in kinds}
        timings: dict[tuple[str, bool], list[float]] = {(k, r): [] for k in kinds for r in (False, True)}
        for _ in range(5):  # alternate the sides
            for kind in kinds:
                for read in (False, True):
                    timings[(kind, read)].append(iterate(clients[kind], read))
        print(f"{n} examples, {IMAGE_BYTES:,}-byte image each (median of 5, alternating)")
        print(f"{'files':8} {'iterate':>10} {'iterate+read':>13} {'db size':>12}")
        for kind in kinds:
            size = sum(  # the file and its write-ahead log (not checkpointed yet)
                os.path.getsize(p) for p in Path(folder).glob(f"{kind}.db*") if not p.name.endswith("-shm")
            )
            walk, walk_read = (statistics.median(timings[(kind, r)]) * 1000 for r in (False, True))
            print(f"{kind:8} {walk:8.0f} ms {walk_read:10.0f} ms {size / 1e6:9.1f} MB")
        for client in clients.values():
            client.close()


if __name__ == "__main__":
    main()
