"""Inline data as assay stored it before content ids (up to commit ad412a3): a dataset
named ``inline-<the content's SHA-256, 12 hex digits>`` whose examples are named by version 5
UUIDs of the digest and the position. Written here from that definition, with no help
from assay's code, as is the content id expected now (by bit operations, not the text
slicing the code does).

Run as a script, ``_legacy_inline.py DB`` stores ``DATA`` so in the SQLite file ``DB`` and
runs an experiment on it with today's code (test_content_ids kills it mid-run).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import uuid
from typing import Any

from assay import Client, evaluate
from assay.schemas import Dataset
from assay.store import Store

NAMESPACE = uuid.UUID("5d1f5b7e-8a7c-4f43-9a55-3c0b4f1a7a11")  # the one the old ids were named in
DATA = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(120)]


def digest_of(records: list[dict[str, Any]]) -> str:
    """The content's digest as the dataset's name has always had it (records without files)."""
    return hashlib.sha256(
        json.dumps(records, sort_keys=True, default=str, ensure_ascii=True).encode()
    ).hexdigest()


def legacy_id(digest: str, position: int) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"{digest}:{position}")


def content_id(digest: str, position: int) -> uuid.UUID:
    """The digest's first 96 bits, version 8 and the RFC variant set over theirs, then the
    position in 32 bits."""
    value = (int(digest, 16) >> 160) << 32 | position
    value = value & ~(0xF << 76) | 0x8 << 76
    value = value & ~(0b11 << 62) | 0b10 << 62
    return uuid.UUID(int=value)


def store_as_before(
    store: Store, records: list[dict[str, Any]], name: str | None = None
) -> tuple[Dataset, list[uuid.UUID]]:
    """``records`` (with ``inputs``, ``outputs``) stored as evaluate(data=records) stored
    them (``name``: under another name than their content's)."""
    digest = digest_of([{k: v for k, v in r.items() if k != "attachments"} for r in records])
    name = name or f"inline-{digest[:12]}"
    dataset = store.create_dataset(name, description="created by evaluate() from inline data")
    ids = [legacy_id(digest, i) for i in range(len(records))]
    values = [(str(id_), r["inputs"], r.get("outputs"), r.get("metadata")) for id_, r in zip(ids, records)]
    store.add_example_values(dataset.id, values)
    stored = store.get_dataset(id=dataset.id)
    assert stored is not None
    return stored, ids


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    time.sleep(0.01)  # slow enough for the test to stop the run midway
    return {"y": 2 * inputs["x"]}


if __name__ == "__main__":
    client = Client(sys.argv[1])
    store_as_before(client.store, DATA)
    print("stored", flush=True)
    evaluate(target, data=DATA, experiment="legacy", max_concurrency=4, client=client, progress=False)
