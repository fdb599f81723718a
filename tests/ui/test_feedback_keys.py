"""Feedback keys edited in the UI: define, rename and delete a key of an experiment or a
dataset, through a CSRF-checked form, on SQLite and PostgreSQL; a bad edit is refused
with its reason and stores nothing; --read-only serves no form and no write."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from ui_testdata import Scenario, build_scenario

from assay.store import Store, open_store
from assay.ui import create_app

ORIGIN = "http://127.0.0.1:8765"


@pytest.fixture
def both(store_url: str) -> Iterator[Scenario]:
    store: Store = open_store(store_url)
    yield build_scenario(store)
    store.close()


def edit(client: TestClient, path: str, **fields: str) -> object:
    page = client.get(path).text
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert token is not None
    return client.post(
        path, data={"csrf": token.group(1), **fields}, headers={"origin": ORIGIN}, follow_redirects=False
    )


def keys_of(store: Store, level: str, name: str) -> object:
    record = (
        store.get_dataset(name=name)
        if level == "datasets"
        else next(x for x in store.list_experiments() if x.name == name)
    )
    return (record.metadata or {}).get("feedback_keys")  # type: ignore[union-attr]


def test_define_rename_and_delete_keys_of_an_experiment_and_a_dataset(both: Scenario) -> None:
    store = both.store
    with TestClient(create_app(store), base_url=ORIGIN) as client:
        dataset = f"/datasets/{both.dataset.id}/feedback-keys"
        saved = edit(client, dataset, action="define", key="tone", kind="label", labels="kind, rude")
        assert saved.status_code == 303, saved.text  # type: ignore[attr-defined]
        assert keys_of(store, "datasets", "qa") == [
            {"key": "tone", "kind": "label", "labels": ["kind", "rude"]}
        ]
        # the experiments of the dataset now ask for it on their rows
        run = store.load_rows(both.baseline)[0].run.id
        assert 'name="key.tone" value="rude"' in client.get(f"/experiments/baseline/rows/{run}").text

        experiment = f"/experiments/{both.baseline.id}/feedback-keys"
        edit(client, experiment, action="define", key="quality", kind="scale", min="1", max="3")
        edit(client, experiment, action="define", key="helpful", kind="thumbs")
        edit(client, experiment, action="rename", key="quality", new_key="grade")
        assert keys_of(store, "experiments", "baseline") == [
            {"key": "grade", "kind": "scale", "min": 1, "max": 3, "step": 1},
            {"key": "helpful", "kind": "thumbs"},
        ]
        page = client.get(experiment).text
        assert '<tr data-key="grade">' in page and "1, 2, 3" in page and 'data-key="tone"' not in page

        edit(client, experiment, action="delete", key="grade")
        edit(client, experiment, action="delete", key="helpful")  # none left: the dataset's keys again
        assert keys_of(store, "experiments", "baseline") is None
        assert '<tr data-key="tone">' in client.get(experiment).text


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"action": "define", "key": "tone", "kind": "label", "labels": "only one"}, "2 to 20 non-empty"),
        ({"action": "define", "key": "tone", "kind": "scale", "min": "5", "max": "1"}, "min &lt; max"),
        ({"action": "define", "key": "helpful", "kind": "thumbs"}, "names a key twice"),
        ({"action": "rename", "key": "nope", "new_key": "x"}, "no feedback key &#39;nope&#39;"),
        ({"action": "define", "key": "s", "kind": "scale", "min": "one"}, "&#39;min&#39; must be a number"),
        ({"action": "explode"}, "must be one of define, rename, delete"),
    ],
)
def test_a_bad_edit_is_refused_with_its_reason_and_stores_nothing(
    scenario: Scenario, fields: dict[str, str], reason: str
) -> None:
    with TestClient(create_app(scenario.store), base_url=ORIGIN) as client:
        path = f"/experiments/{scenario.baseline.id}/feedback-keys"
        edit(client, path, action="define", key="helpful", kind="thumbs")
        refused = edit(client, path, **fields)
    assert refused.status_code == 400 and reason in refused.text, refused.text  # type: ignore[attr-defined]
    assert keys_of(scenario.store, "experiments", "baseline") == [{"key": "helpful", "kind": "thumbs"}]


def test_a_write_without_the_token_or_in_read_only_mode_is_refused(scenario: Scenario) -> None:
    path = f"/experiments/{scenario.baseline.id}/feedback-keys"
    with TestClient(create_app(scenario.store), base_url=ORIGIN) as client:
        forged = client.post(
            path, data={"action": "define", "key": "x", "csrf": "guess"}, headers={"origin": ORIGIN}
        )
        assert forged.status_code == 403
    with TestClient(create_app(scenario.store, read_only=True), base_url=ORIGIN) as client:
        page = client.get(path).text
        assert 'id="define-key"' not in page and 'id="read-only-note"' in page
        assert client.post(path, data={"action": "define", "key": "x"}).status_code == 405
    assert keys_of(scenario.store, "experiments", "baseline") is None
