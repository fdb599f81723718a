"""``evaluate(data="file.jsonl")`` streams the file: bounded memory, errors before anything
is stored, and the same content names the same dataset as before streaming."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest

from assay import Client, evaluate
from assay.evaluation import DataError
from assay.evaluation._data import resolve_data


def echo(inputs: dict) -> dict:
    return {"y": inputs["x"]}


def write_jsonl(path: Path, n: int, bad_line: int | None = None) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            if i + 1 == bad_line:
                handle.write('{"inputs": {"x": 1},\n')
            else:
                handle.write(json.dumps({"inputs": {"x": i, "text": "a" * 40}, "outputs": {"y": i}}) + "\n")
    return path


@pytest.mark.parametrize("bad_line", [1, 2_500, 5_000])
def test_a_bad_line_anywhere_names_file_and_line_and_stores_nothing(
    client: Client, tmp_path: Path, bad_line: int
) -> None:
    path = write_jsonl(tmp_path / "data.jsonl", 5_000, bad_line=bad_line)
    with pytest.raises(DataError, match=rf"data\.jsonl:{bad_line}: invalid JSON"):
        evaluate(echo, data=str(path), client=client)
    assert client.store.list_datasets() == []
    assert client.store.list_experiments() == []


def test_a_bad_record_is_located_and_stores_nothing(client: Client, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "data.jsonl", 100)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"inputs": [1, 2]}) + "\n")
    with pytest.raises(DataError, match=r"data\.jsonl:101: 'inputs' must be an object"):
        evaluate(echo, data=str(path), client=client)
    assert client.store.list_datasets() == []


def test_a_failed_import_leaves_no_dataset_behind(client: Client, tmp_path: Path, monkeypatch) -> None:
    """The second pass fails (the store refuses a write): nothing stays under the name."""
    path = write_jsonl(tmp_path / "data.jsonl", 50)

    def refuse(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(client.store, "add_example_values", refuse)
    with pytest.raises(OSError, match="disk full"):
        evaluate(echo, data=str(path), client=client)
    monkeypatch.undo()
    assert client.store.list_datasets() == []
    results = evaluate(echo, data=str(path), client=client)  # and it imports cleanly afterwards
    assert len(results) == 50


def test_the_same_content_names_the_same_dataset_as_the_whole_file_hash(
    client: Client, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "data.jsonl", 300)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    whole = json.dumps(records, sort_keys=True, default=str, ensure_ascii=True)
    expected = f"data-{hashlib.sha256(whole.encode()).hexdigest()[:12]}"
    first = resolve_data(str(path), client.store)
    again = resolve_data(path, client.store)
    assert first.dataset.name == expected and again.dataset.id == first.dataset.id
    assert first.count == 300 and len(client.store.list_datasets()) == 1
    stored = client.store.list_examples(first.dataset.id)
    assert [e.inputs["x"] for e in stored] == list(range(300))
    assert stored[7].outputs == {"y": 7}


def test_reading_a_file_holds_a_bounded_amount_of_memory(client: Client, tmp_path: Path) -> None:
    """Python memory at its peak while a 8,000-line file is imported: the records
    themselves (a list of them) take ~20 MB; streaming holds a page of them (~7 MB)."""
    path = write_jsonl(tmp_path / "data.jsonl", 8_000)
    tracemalloc.start()
    try:
        resolved = resolve_data(str(path), client.store)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert resolved.count == 8_000
    assert peak < 12 * 2**20, f"peak {peak / 2**20:.1f} MB"
