"""People's feedback through the UI's one write, against a real SQLite store: stored as
the same records as Client.create_feedback, shown as a column and a metric with its
interval, guarded by origin and CSRF token, refused whole by --read-only."""

from __future__ import annotations

import html
import re
import threading
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from http.cookiejar import CookieJar
from typing import Any

import pytest
from fastapi.testclient import TestClient
from ui_testdata import LiveServer, Scenario

from assay.client import Client
from assay.stats.intervals import wilson
from assay.store import Store
from assay.ui import create_app

ORIGIN = "http://127.0.0.1:8765"


@pytest.fixture
def client(scenario: Scenario) -> Iterator[TestClient]:
    with TestClient(create_app(scenario.store), base_url=ORIGIN) as opened:
        yield opened


def run_ids(client: TestClient, experiment: str = "baseline") -> list[str]:
    rows = client.get(f"/api/experiments/{experiment}/rows?per_page=100").json()["rows"]
    return [row["run_id"] for row in rows]


def token_of(client: TestClient, run_id: str, experiment: str = "baseline") -> str:
    page = client.get(f"/experiments/{experiment}/rows/{run_id}")
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert found is not None, "the row page carries a feedback form with its token"
    return found.group(1)


def post(client: TestClient, run_id: str, fields: dict[str, str], experiment: str = "baseline", **kw: object):  # type: ignore[no-untyped-def]
    headers = {"origin": ORIGIN, **kw.pop("headers", {})}  # type: ignore[dict-item]
    return client.post(
        f"/experiments/{experiment}/rows/{run_id}/feedback",
        data=fields,
        headers=headers,
        follow_redirects=False,
    )


def test_a_label_is_a_human_feedback_record_as_create_feedback_makes(
    client: TestClient, scenario: Scenario
) -> None:
    run = run_ids(client)[3]
    token = token_of(client, run)
    saved = post(
        client, run, {"csrf": token, "annotator": "Alice", "key.human": "down", "comment": "wrong unit"}
    )
    assert saved.status_code == 303 and saved.headers["location"].endswith(f"/rows/{run}")
    records = Client(store=scenario.store).list_feedback(run_ids=[run])
    human = [f for f in records if (f.feedback_source or {}).get("type") == "human"]
    assert {(f.key, f.score, f.value, f.comment) for f in human} == {
        ("human", 0, "down", None),
        ("note", None, None, "wrong unit"),
    }
    assert all(f.feedback_source == {"type": "human", "metadata": {"annotator": "Alice"}} for f in human)
    assert all(f.session_id == scenario.baseline.id and str(f.run_id) == run for f in human)
    # the row page shows it beside the evaluators' results, and prefills the form with it
    page = client.get(f"/experiments/baseline/rows/{run}").text
    assert 'value="down" checked' in page and "wrong unit" in page


def test_the_row_table_and_the_experiment_page_show_the_human_metric(client: TestClient) -> None:
    runs = run_ids(client)
    verdicts = {0: ("Alice", "up"), 1: ("Alice", "down"), 2: ("Alice", "up"), 3: ("Alice", "up")}
    for index, (who, choice) in verdicts.items():
        post(
            client,
            runs[index],
            {"csrf": token_of(client, runs[index]), "annotator": who, "key.human": choice},
        )
    # a second annotator disagrees on row 1; and Alice changes her mind on row 3: the latest counts
    post(client, runs[1], {"csrf": token_of(client, runs[1]), "annotator": "Bob", "key.human": "up"})
    post(client, runs[3], {"csrf": token_of(client, runs[3]), "annotator": "Alice", "key.human": "down"})

    rows = client.get("/api/experiments/baseline/rows?per_page=5").json()["rows"]
    cells = [row["human"] for row in rows]
    assert cells[0] == [{"key": "human", "score": 1.0, "labels": ["up"], "annotators": 1}]
    assert cells[1] == [{"key": "human", "score": 0.5, "labels": ["down", "up"], "annotators": 2}]
    assert cells[3][0]["score"] == 0.0 and cells[4] == []

    metric = client.get("/api/experiments/baseline").json()["human_metrics"]
    assert len(metric) == 1 and metric[0]["key"] == "human"
    # rows: 1, 0.5, 1, 0 -> not all 0/1, so Student t over the four row means
    assert metric[0]["mean"] == pytest.approx(0.625) and metric[0]["rows"] == 4
    assert metric[0]["labels"] == 5 and metric[0]["annotators"] == ["Alice", "Bob"]
    assert (
        metric[0]["ci_method"] == "Student t" and 0 <= metric[0]["ci_low"] < 0.625 < metric[0]["ci_high"] <= 1
    )
    html = client.get("/experiments/baseline").text
    assert 'id="human-metrics"' in html and "0.625" in html


def test_thumbs_only_rows_get_a_wilson_interval(client: TestClient) -> None:
    runs = run_ids(client)
    for index in range(5):
        choice = "up" if index < 4 else "down"
        post(
            client,
            runs[index],
            {"csrf": token_of(client, runs[index]), "annotator": "Ann", "key.human": choice},
        )
    metric = client.get("/api/experiments/baseline").json()["human_metrics"][0]
    expected = wilson(4, 5)
    assert (metric["ci_low"], metric["ci_high"], metric["ci_method"]) == pytest.approx(
        (expected.low, expected.high, "Wilson")
    )


def test_keys_defined_in_the_dataset_metadata(store: Store) -> None:
    from ui_testdata import RowSpec, make_dataset, make_experiment

    dataset, examples = make_dataset(store, "graded", [{"inputs": {"q": "a"}, "outputs": {"answer": "x"}}])
    store_dataset = store.get_dataset(id=dataset.id)
    assert store_dataset is not None
    keys = [
        {"key": "quality", "kind": "scale", "min": 1, "max": 5},
        {"key": "category", "kind": "label", "labels": ["ok", "wrong", "harmful"]},
    ]
    _set_dataset_metadata(store, dataset.id, {"feedback_keys": keys})
    make_experiment(
        store, "graded-run", dataset, examples, [RowSpec(outputs={"answer": "y"}, scores={"exact": 0})]
    )
    with TestClient(create_app(store), base_url=ORIGIN) as client:
        run = run_ids(client, "graded-run")[0]
        page = client.get(f"/experiments/graded-run/rows/{run}").text
        assert page.count('name="key.quality"') == 5 and page.count('name="key.category"') == 3
        fields = {
            "csrf": token_of(client, run, "graded-run"),
            "annotator": "Al",
            "key.quality": "4",
            "key.category": "wrong",
        }
        assert post(client, run, fields, "graded-run").status_code == 303
        bad = post(client, run, {**fields, "key.quality": "7"}, "graded-run")
        assert (
            bad.status_code == 400
            and "feedback key 'quality' accepts 1, 2, 3, 4, 5; got '7'" in html.unescape(bad.text)
        )
        metrics = {m["key"]: m for m in client.get("/api/experiments/graded-run").json()["human_metrics"]}
    assert metrics["quality"]["mean"] == 4
    shares = {s["label"]: s["count"] for s in metrics["category"]["shares"]}
    assert shares == {"ok": 0, "wrong": 1, "harmful": 0}
    scores = {f.key: (f.score, f.value) for f in store.list_feedback(keys=["quality", "category"])}
    assert scores == {"quality": (4, 4), "category": (None, "wrong")}


def test_a_bad_key_definition_is_named_with_its_place(store: Store) -> None:
    from ui_testdata import RowSpec, make_dataset, make_experiment

    dataset, examples = make_dataset(store, "badkeys", [{"inputs": {"q": "a"}}])
    _set_dataset_metadata(
        store,
        dataset.id,
        {"feedback_keys": [{"key": "ok"}, {"key": "s", "kind": "scale", "min": 5, "max": 1}]},
    )
    make_experiment(store, "badkeys-run", dataset, examples, [RowSpec(outputs={"a": 1})])
    with TestClient(create_app(store), base_url=ORIGIN) as client:
        run = run_ids(client, "badkeys-run")[0]  # reading never stops at a bad definition
        row = client.get(f"/experiments/badkeys-run/rows/{run}")
        experiment = client.get("/experiments/badkeys-run")
        write = post(
            client, run, {"csrf": token_of_any(client), "annotator": "A", "key.ok": "up"}, "badkeys-run"
        )
    expected = "dataset 'badkeys' metadata feedback_keys[1]: a scale needs numbers min < max"
    assert row.status_code == 200 and expected in html.unescape(row.text) and 'id="annotate"' not in row.text
    assert experiment.status_code == 200 and expected in html.unescape(experiment.text)
    assert write.status_code == 400 and expected in html.unescape(write.text)
    assert _human(store) == []


def token_of_any(client: TestClient) -> str:
    from assay.ui.csrf import CSRF_COOKIE

    client.get("/experiments")
    keys = client.app.state.csrf  # type: ignore[attr-defined]
    return str(keys.token(client.cookies[CSRF_COOKIE]))


def _set_dataset_metadata(store: Store, dataset_id: uuid.UUID, metadata: dict[str, object]) -> None:
    """Dataset metadata as a person would set it once (the store has no update call for it)."""
    import json

    with store.transaction() as conn:  # type: ignore[attr-defined]
        conn.execute("UPDATE datasets SET metadata = ? WHERE id = ?", (json.dumps(metadata), str(dataset_id)))


def test_a_correction_keeps_the_outputs_shape(client: TestClient, scenario: Scenario) -> None:
    run = run_ids(client)[1]  # outputs {"answer": "wrong 1"}
    page = client.get(f"/experiments/baseline/rows/{run}").text
    assert ">wrong 1</textarea>" in page  # the box starts with the output's text
    fields = {"csrf": token_of(client, run), "annotator": "Cy", "correction": "answer 1\nwith a second line"}
    assert post(client, run, fields).status_code == 303
    notes = [f for f in scenario.store.list_feedback(run_ids=[uuid.UUID(run)], keys=["note"])]
    assert [n.correction for n in notes] == [{"answer": "answer 1\nwith a second line"}]
    unchanged = {
        "csrf": token_of(client, run),
        "annotator": "Cy",
        "correction": "answer 1\nwith a second line",
    }
    assert post(client, run, unchanged).status_code == 400  # nothing new: named, not silently stored


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"key.human": "up"}, "parameter 'annotator'"),
        ({"annotator": "A", "key.human": "sideways"}, "accepts up, down; got 'sideways'"),
        ({"annotator": "A"}, "nothing to save"),
        ({"annotator": "x" * 65, "key.human": "up"}, "1 to 64 printable characters"),
    ],
)
def test_bad_submissions_are_named_and_store_nothing(
    client: TestClient, scenario: Scenario, fields: dict[str, str], message: str
) -> None:
    run = run_ids(client)[0]
    answer = post(client, run, {"csrf": token_of(client, run), **fields})
    assert answer.status_code == 400 and message in html.unescape(answer.text)
    assert _human(scenario.store) == []


def _human(store: Store) -> list[object]:
    return [f for f in store.list_feedback() if (f.feedback_source or {}).get("type") == "human"]


def test_a_write_needs_this_sessions_csrf_token(client: TestClient, scenario: Scenario) -> None:
    run = run_ids(client)[0]
    fields = {"annotator": "Eve", "key.human": "up"}
    missing = post(client, run, fields)
    assert missing.status_code == 403 and "reload the page" in missing.text
    forged = post(client, run, {**fields, "csrf": "0" * 64})
    assert forged.status_code == 403
    # a token from another browser's session does not fit this one's cookie
    with TestClient(create_app(scenario.store), base_url=ORIGIN) as other:
        other_token = token_of(other, run)
    client.get("/experiments")  # this browser has its own session cookie
    assert post(client, run, {**fields, "csrf": other_token}).status_code == 403
    assert _human(scenario.store) == []


def test_a_write_from_another_origin_is_refused_even_with_a_token(
    client: TestClient, scenario: Scenario
) -> None:
    run = run_ids(client)[0]
    fields = {"csrf": token_of(client, run), "annotator": "Eve", "key.human": "up"}
    assert post(client, run, fields, headers={"origin": "http://evil.example"}).status_code == 403
    no_origin = client.post(f"/experiments/baseline/rows/{run}/feedback", data=fields, follow_redirects=False)
    assert no_origin.status_code == 403 and "no usable Origin header" in no_origin.text
    null = post(client, run, fields, headers={"origin": "null"})  # a sandboxed frame, a data: page
    assert null.status_code == 403
    same_site = client.post(
        f"/experiments/baseline/rows/{run}/feedback",
        data=fields,
        headers={"sec-fetch-site": "same-site"},
        follow_redirects=False,
    )
    assert same_site.status_code == 403
    assert _human(scenario.store) == []
    assert post(client, run, fields).status_code == 303  # the same write from this UI's page


def test_a_redirect_after_a_write_stays_on_this_server(client: TestClient) -> None:
    run = run_ids(client)[0]
    for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
        fields = {"csrf": token_of(client, run), "annotator": "A", "key.human": "up", "next": target}
        assert post(client, run, fields).headers["location"].startswith("/experiments/")


def test_with_a_ui_token_a_write_also_needs_it(scenario: Scenario) -> None:
    token = "write-token-1234"
    with TestClient(create_app(scenario.store, token=token), base_url="http://192.0.2.1:8765") as client:
        client.get(f"/experiments?token={token}")  # the cookie of a logged-in browser
        run = run_ids(client)[0]
        csrf = token_of(client, run)
        client.cookies.delete("assay_ui_session")
        refused = client.post(
            f"/experiments/baseline/rows/{run}/feedback",
            data={"csrf": csrf, "annotator": "A", "key.human": "up"},
            headers={"origin": "http://192.0.2.1:8765"},
            follow_redirects=False,
        )
    assert refused.status_code == 401
    assert _human(scenario.store) == []


def test_read_only_serves_no_write_at_all(scenario: Scenario) -> None:
    write_paths = _write_routes(create_app(scenario.store).routes)
    assert sorted(write_paths) == [  # every write the UI has
        "/datasets/{ref}/examples",
        "/datasets/{ref}/examples/{example_id}",
        "/datasets/{ref}/examples/{example_id}/delete",
        "/datasets/{ref}/feedback-keys",
        "/datasets/{ref}/upload",
        "/experiments/{ref}/feedback-keys",
        "/experiments/{ref}/rows/{run_id}/feedback",
        "/experiments/{ref}/rows/{run_id}/to-dataset",
    ]
    app = create_app(scenario.store, read_only=True)
    assert _write_routes(app.routes) == []
    run = str(scenario.store.load_rows(scenario.baseline)[0].run.id)
    example = str(scenario.examples[0].id)
    dataset = scenario.store.get_dataset(name="qa")
    before = (dataset.version if dataset else None, scenario.store.count_examples(scenario.dataset.id))
    with TestClient(app, base_url=ORIGIN) as client:
        page = client.get(f"/experiments/baseline/rows/{run}").text
        assert 'id="annotate"' not in page and 'id="to-dataset"' not in page and "--read-only" in page
        paths = [
            p.format(ref="baseline" if p.startswith("/experiments") else "qa", run_id=run, example_id=example)
            for p in write_paths
        ]
        for path in [*paths, "/api/experiments", "/queue"]:
            for method in ("POST", "PUT", "PATCH", "DELETE"):
                answer = client.request(
                    method, path, data={"annotator": "A", "key.human": "up"}, headers={"origin": ORIGIN}
                )
                assert answer.status_code == 405, (method, path)
                assert answer.headers["allow"] == "GET, HEAD"
    assert _human(scenario.store) == []
    after = scenario.store.get_dataset(name="qa")
    assert (after.version if after else None, scenario.store.count_examples(scenario.dataset.id)) == before


def _write_routes(routes: list[Any]) -> list[str]:
    """Every route answering a method other than GET and HEAD, in included routers too."""
    found = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            found += _write_routes(inner.routes)
        elif set(getattr(route, "methods", None) or ()) - {"GET", "HEAD"}:
            found.append(route.path)
    return found


def test_two_annotators_at_once_lose_nothing(scenario: Scenario) -> None:
    """Two browsers label all twelve rows at the same time against a real server."""
    with LiveServer(scenario.store) as server:
        runs = [str(r.run.id) for r in scenario.store.load_rows(scenario.baseline)]
        failures: list[BaseException] = []
        start = threading.Barrier(2)

        def annotate(name: str, choice: str) -> None:
            try:
                jar = CookieJar()
                opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
                start.wait()
                for run in runs:
                    page = opener.open(f"{server.url}/experiments/baseline/rows/{run}").read().decode()
                    token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
                    assert token is not None
                    body = urllib.parse.urlencode(
                        {"csrf": token.group(1), "annotator": name, "key.human": choice}
                    ).encode()
                    request = urllib.request.Request(
                        f"{server.url}/experiments/baseline/rows/{run}/feedback",
                        data=body,
                        headers={"Origin": server.url},
                    )
                    assert opener.open(request).status == 200  # after the 303 to the row page
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                failures.append(exc)

        threads = [threading.Thread(target=annotate, args=args) for args in (("Ann", "up"), ("Ben", "down"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
    labels = [
        (f.feedback_source["metadata"]["annotator"], str(f.run_id), f.score) for f in _human(scenario.store)
    ]  # type: ignore[attr-defined]
    assert sorted(labels) == sorted([("Ann", r, 1) for r in runs] + [("Ben", r, 0) for r in runs])
