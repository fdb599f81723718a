"""Datasets people grow from the UI, against a real SQLite store: each change a new
dataset version through the store's API; an upload read by the CLI's import (a bad line
named, nothing stored); a row added with people's correction as its reference."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from ui_testdata import Scenario

from assay.ui import create_app

ORIGIN = "http://127.0.0.1:8765"


@pytest.fixture
def client(scenario: Scenario) -> Iterator[TestClient]:
    with TestClient(create_app(scenario.store), base_url=ORIGIN) as opened:
        yield opened


def token(client: TestClient) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', client.get("/datasets/qa").text)
    assert found is not None
    return found.group(1)


def post(client: TestClient, path: str, fields: dict[str, str]):  # type: ignore[no-untyped-def]
    return client.post(
        path, data={"csrf": token(client), **fields}, headers={"origin": ORIGIN}, follow_redirects=False
    )


def current(scenario: Scenario) -> tuple[int, list[dict[str, object]]]:
    dataset = scenario.store.get_dataset(name="qa")
    assert dataset is not None
    examples = scenario.store.list_examples(dataset.id)
    return dataset.version, [{"inputs": e.inputs, "outputs": e.outputs} for e in examples]


def test_add_edit_and_delete_examples_each_make_a_version(client: TestClient, scenario: Scenario) -> None:
    version, before = current(scenario)
    added = post(
        client, "/datasets/qa/examples", {"inputs": '{"question": "new"}', "outputs": '{"answer": "yes"}'}
    )
    assert added.status_code == 303 and f"version={version + 1}" in added.headers["location"]
    assert current(scenario) == (
        version + 1,
        [*before, {"inputs": {"question": "new"}, "outputs": {"answer": "yes"}}],
    )

    first = str(scenario.examples[0].id)
    fixed = post(
        client,
        f"/datasets/qa/examples/{first}",
        {"inputs": '{"question": "question 0"}', "outputs": '{"answer": "fixed 0"}'},
    )
    assert fixed.status_code == 303
    version_now, examples = current(scenario)
    assert (
        version_now == version + 2
        and {"inputs": {"question": "question 0"}, "outputs": {"answer": "fixed 0"}} in examples
    )
    # the experiments keep the reference of the version they ran on
    row = client.get("/api/experiments/baseline/rows?per_page=1").json()["rows"][0]
    assert row["reference"] == "answer 0"

    deleted = post(client, f"/datasets/qa/examples/{first}/delete", {})
    assert deleted.status_code == 303
    assert current(scenario)[0] == version + 3 and len(current(scenario)[1]) == len(before)
    gone = client.get(f"/datasets/qa/examples/{first}/edit")
    assert gone.status_code == 404 and "no current example" in html.unescape(gone.text)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"inputs": ""}, "parameter 'inputs': a JSON object is required"),
        ({"inputs": "{oops"}, "parameter 'inputs': not valid JSON"),
        ({"inputs": "[1, 2]"}, "parameter 'inputs': must be a JSON object"),
        ({"inputs": '{"q": 1}', "outputs": '"text"'}, "parameter 'outputs': must be a JSON object"),
    ],
)
def test_bad_fields_are_named_and_change_nothing(
    client: TestClient, scenario: Scenario, fields: dict[str, str], message: str
) -> None:
    before = current(scenario)
    answer = post(client, "/datasets/qa/examples", fields)
    assert answer.status_code == 400 and message in html.unescape(answer.text)
    assert current(scenario) == before


def test_an_upload_is_read_as_the_cli_reads_a_file(client: TestClient, scenario: Scenario) -> None:
    version, before = current(scenario)
    bad = "\n".join(
        ['{"inputs": {"q": "a"}}', '{"inputs": {"q": "b"}}', '{"inputs": {"q": "c"', '{"inputs": {"q": "d"}}']
    )
    refused = post(
        client, "/datasets/qa/upload", {"format": "jsonl", "filename": "more.jsonl", "content": bad}
    )
    assert refused.status_code == 400
    assert (
        "more.jsonl:3: invalid JSON" in html.unescape(refused.text) and "nothing was stored" in refused.text
    )
    assert "/tmp/" not in refused.text  # the server's temporary path stays its own
    assert current(scenario) == (version, before)

    table = "question,outputs.answer,metadata.source\nwhat is 2+2?,4,upload\nand 3+3?,6,upload\n"
    uploaded = post(
        client, "/datasets/qa/upload", {"format": "csv", "filename": "more.csv", "content": table}
    )
    assert uploaded.status_code == 303 and "uploaded+2+examples" in uploaded.headers["location"]
    version_now, examples = current(scenario)
    assert version_now == version + 1 and examples[-2:] == [
        {"inputs": {"question": "what is 2+2?"}, "outputs": {"answer": "4"}},
        {"inputs": {"question": "and 3+3?"}, "outputs": {"answer": "6"}},
    ]
    ragged = post(
        client, "/datasets/qa/upload", {"format": "csv", "filename": "r.csv", "content": "a,b\n1,2\n3\n"}
    )
    assert ragged.status_code == 400 and "r.csv:3: 1 value where the header has 2 columns" in html.unescape(
        ragged.text
    )


def test_add_a_row_to_a_dataset_with_its_correction_as_reference(
    client: TestClient, scenario: Scenario
) -> None:
    rows = client.get("/api/experiments/baseline/rows?per_page=3").json()["rows"]
    corrected, plain = rows[1]["run_id"], rows[2]["run_id"]
    page = client.get(f"/experiments/baseline/rows/{corrected}").text
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)  # type: ignore[union-attr]
    fixed = client.post(
        f"/experiments/baseline/rows/{corrected}/feedback",
        data={"csrf": csrf, "annotator": "Ann", "key.human": "down", "correction": "answer 1"},
        headers={"origin": ORIGIN},
        follow_redirects=False,
    )
    assert fixed.status_code == 303
    version, before = current(scenario)
    for run in (corrected, plain):
        added = post(client, f"/experiments/baseline/rows/{run}/to-dataset", {"dataset": "qa"})
        assert added.status_code == 303, added.text
    version_now, examples = current(scenario)
    assert version_now == version + 2
    assert examples[-2:] == [
        {"inputs": {"question": "question 1"}, "outputs": {"answer": "answer 1"}},  # people's correction
        {"inputs": {"question": "question 2"}, "outputs": {"answer": "answer 2"}},  # the row's outputs
    ]
    dataset = scenario.store.get_dataset(name="qa")
    assert dataset is not None
    last = scenario.store.list_examples(dataset.id)[-2]
    assert last.metadata == {"from_experiment": "baseline", "from_run": corrected, "reference": "corrected"}
    missing = post(client, f"/experiments/baseline/rows/{plain}/to-dataset", {"dataset": "nope"})
    assert missing.status_code == 400 and "no dataset with id or name 'nope'" in html.unescape(missing.text)


def test_dataset_writes_need_the_token_and_are_gone_when_read_only(scenario: Scenario) -> None:
    example = str(scenario.examples[0].id)
    paths = [
        "/datasets/qa/examples",
        f"/datasets/qa/examples/{example}",
        f"/datasets/qa/examples/{example}/delete",
        "/datasets/qa/upload",
    ]
    before = current(scenario)
    with TestClient(create_app(scenario.store), base_url=ORIGIN) as client:
        for path in paths:
            answer = client.post(
                path, data={"inputs": '{"q": 1}', "content": '{"inputs": {}}'}, headers={"origin": ORIGIN}
            )
            assert answer.status_code == 403, path
    with TestClient(create_app(scenario.store, read_only=True), base_url=ORIGIN) as client:
        page = client.get("/datasets/qa").text
        assert 'id="grow-dataset"' not in page and "edit-link" not in page
        for path in paths:
            assert client.post(path, data={}, headers={"origin": ORIGIN}).status_code == 405
    assert current(scenario) == before
    assert uuid.UUID(example)
