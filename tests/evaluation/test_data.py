"""``data=`` in every form; a malformed file names the file and the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import Client, Example
from assay.evaluation import DataError


def echo(inputs: dict) -> dict:
    return dict(inputs)


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_jsonl_json_and_csv_files(client: Client, tmp_path: Path) -> None:
    jsonl = write_jsonl(
        tmp_path / "qa.jsonl",
        [
            {"inputs": {"q": "a"}, "outputs": {"r": "A"}},
            {"q": "b"},  # full and flat records
        ],
    )
    (tmp_path / "qa.json").write_text(json.dumps({"examples": [{"inputs": {"q": "c"}}]}))
    (tmp_path / "qa.csv").write_text("q,outputs.r,metadata.source\nd,D,web\ne,E,book\n")
    assert [r["run"].outputs for r in client.evaluate(echo, data=jsonl)] == [{"q": "a"}, {"q": "b"}]
    assert [r["run"].outputs for r in client.evaluate(echo, data=str(tmp_path / "qa.json"))] == [{"q": "c"}]
    rows = list(client.evaluate(echo, data=tmp_path / "qa.csv"))
    assert [(r["example"].inputs, r["example"].outputs, r["example"].metadata) for r in rows] == [
        ({"q": "d"}, {"r": "D"}, {"source": "web"}),
        ({"q": "e"}, {"r": "E"}, {"source": "book"}),
    ]


def test_malformed_jsonl_names_file_and_line(client: Client, tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"inputs": {"q": 1}}\n\n{"inputs": {"q": 2}\n')
    with pytest.raises(DataError, match=f"{path}:3: invalid JSON"):
        client.evaluate(echo, data=path)
    assert client.list_experiments() == [] and client.list_datasets() == []


def test_malformed_json_csv_and_fields_are_located(client: Client, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('[\n  {"inputs": {}},\n  {"inputs": }\n]')
    with pytest.raises(DataError, match="bad.json:3: invalid JSON"):
        client.evaluate(echo, data=tmp_path / "bad.json")
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n3\n")
    with pytest.raises(DataError, match="bad.csv:3: 1 value where the header has 2 columns"):
        client.evaluate(echo, data=tmp_path / "bad.csv")
    write_jsonl(tmp_path / "fields.jsonl", [{"inputs": {}}, {"inputs": "text"}])
    with pytest.raises(DataError, match="fields.jsonl:2: 'inputs' must be an object"):
        client.evaluate(echo, data=tmp_path / "fields.jsonl")
    write_jsonl(tmp_path / "extra.jsonl", [{"inputs": {}, "expected": 1}])
    with pytest.raises(DataError, match="extra.jsonl:1: unknown example fields \\['expected'\\]"):
        client.evaluate(echo, data=tmp_path / "extra.jsonl")
    with pytest.raises(DataError, match="missing.jsonl: no such file"):
        client.evaluate(echo, data=tmp_path / "missing.jsonl")


def test_dataset_by_name_id_object_and_unknown_name(client: Client) -> None:
    dataset = client.create_dataset("named")
    client.create_examples(inputs=[{"q": 1}], dataset_name="named")
    for data in ("named", str(dataset.id), dataset.id, dataset):
        [row] = list(client.evaluate(echo, data=data))
        assert row["example"].dataset_id == dataset.id
    with pytest.raises(DataError, match=r"no dataset 'nameless' \(did you mean 'named'\?\) in the store"):
        client.evaluate(echo, data="nameless")


def test_same_inline_content_reuses_one_dataset_with_stable_ids(client: Client) -> None:
    data = [{"inputs": {"q": i}} for i in range(3)]
    first = [r["example"].id for r in client.evaluate(echo, data=data)]
    second = [r["example"].id for r in client.evaluate(echo, data=[dict(d) for d in data])]
    assert first == second and len(client.list_datasets()) == 1
    examples = [Example(inputs={"q": "x"}), Example(inputs={"q": "y"})]
    rows = list(client.evaluate(echo, data=examples))
    assert [r["example"].id for r in rows] == [e.id for e in examples]


def test_items_that_are_not_examples_are_located(client: Client) -> None:
    with pytest.raises(DataError, match="data\\[1\\]: expected an Example or a dict, got int"):
        client.evaluate(echo, data=[{"q": 1}, 5])
    with pytest.raises(DataError, match="data holds no examples"):
        client.evaluate(echo, data=[])
