"""What a visitor can send, against real uvicorn servers: HEAD, out-of-range numbers,
stored strings no encoder takes, and the token spelled every way (in the real access log)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote, unquote_plus

import httpx
import pytest
from test_server import wait_for_port
from ui_testdata import (
    LiveServer,
    RowSpec,
    Scenario,
    build_scenario,
    free_port,
    make_dataset,
    make_experiment,
)

from assay.store import Store, open_store

LONE = "lone \ud800 high and \udfff low"
SHOWN = "lone \ufffd high and \ufffd low"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Scenario, dict[str, str]]]:
    store: Store = open_store(str(tmp_path_factory.mktemp("hardening") / "ui.db"))
    scenario = build_scenario(store)
    odd = store_lone_surrogates(store)
    with LiveServer(store) as server:
        yield server, scenario, odd
    store.close()


def store_lone_surrogates(store: Store) -> dict[str, str]:
    """A dataset and an experiment whose JSON values (and keys) hold lone surrogates."""
    dataset, examples = make_dataset(
        store, "odd", [{"inputs": {"q": LONE}, "outputs": {"a": LONE}, "metadata": {LONE: LONE}}]
    )
    spec = RowSpec(
        outputs={"answer": LONE, LONE: 1},
        scores={"correct": 1},
        metadata={"correct": {"note": LONE, "rows": [[LONE]], "columns": ["c"]}},
    )
    record = make_experiment(store, "odd-run", dataset, examples, [spec])
    run_id = store.conn.execute(  # type: ignore[attr-defined]
        "SELECT id FROM runs WHERE experiment_id = ?", (str(record.id),)
    ).fetchone()[0]
    return {"dataset": str(dataset.id), "experiment": str(record.id), "run": str(run_id)}


def get_routes(scenario: Scenario, odd: dict[str, str]) -> list[str]:
    experiment, run = odd["experiment"], odd["run"]
    return [
        "/experiments",
        "/experiments/baseline",
        f"/experiments/{experiment}/rows/{run}",
        "/compare",
        "/compare?e=baseline&e=candidate",
        "/datasets",
        "/datasets/qa",
        "/static/app.css",
        "/static/app.js",
        "/api/openapi.json",
        "/api/datasets",
        "/api/datasets/qa/examples",
        "/api/experiments",
        "/api/experiments/baseline",
        "/api/experiments/baseline/rows",
        f"/api/experiments/{experiment}/rows/{run}",
        "/api/compare?e=baseline&e=candidate",
        "/experiments/missing",  # a 404 as well
    ]


def test_head_answers_wherever_get_does(served: tuple[LiveServer, Scenario, dict[str, str]]) -> None:
    server, scenario, odd = served
    with httpx.Client(base_url=server.url) as client:
        for path in get_routes(scenario, odd):
            got, head = client.get(path), client.head(path)
            assert head.status_code == got.status_code, path
            assert head.content == b"", path
            assert head.headers["content-type"] == got.headers["content-type"], path
            assert head.headers["content-length"] == str(len(got.content)), path
            assert head.headers["content-security-policy"] == got.headers["content-security-policy"]
        assert client.head("/").status_code == 307


PAGED = [
    "/experiments",
    "/experiments/baseline",
    "/compare?e=baseline&e=candidate",
    "/datasets/qa",
    "/api/experiments",
    "/api/experiments/baseline/rows",
    "/api/compare?e=baseline&e=candidate",
    "/api/datasets/qa/examples",
]
HUGE_NUMBERS = ["9223372036854775807", "9223372036854775808", "1" + "0" * 30, "1000000001", "-5", "0", "1e3"]


@pytest.mark.parametrize("path", PAGED)
def test_out_of_range_page_numbers_answer_400_naming_the_parameter(
    served: tuple[LiveServer, Scenario, dict[str, str]], path: str
) -> None:
    server = served[0]
    joiner = "&" if "?" in path else "?"
    with httpx.Client(base_url=server.url) as client:
        for number in HUGE_NUMBERS:
            answer = client.get(f"{path}{joiner}page={number}")
            assert answer.status_code == 400, (path, number, answer.status_code)
            assert "page" in answer.text
        last = client.get(f"{path}{joiner}page=1000000000")  # the largest page: empty, not an error
        assert last.status_code == 200


@pytest.mark.parametrize("number", ["9223372036854775808", "1e300", "99999999999", "-1", "2.5"])
def test_out_of_range_versions_answer_400(
    served: tuple[LiveServer, Scenario, dict[str, str]], number: str
) -> None:
    server = served[0]
    with httpx.Client(base_url=server.url) as client:
        for path in ("/datasets/qa", "/api/datasets/qa/examples"):
            answer = client.get(f"{path}?version={number}")
            assert answer.status_code == 400 and "version" in answer.text, (path, number)


def test_every_stored_string_renders_in_pages_and_api(
    served: tuple[LiveServer, Scenario, dict[str, str]],
) -> None:
    server, _, odd = served
    experiment, run, dataset = odd["experiment"], odd["run"], odd["dataset"]
    with httpx.Client(base_url=server.url) as client:
        for path in (
            f"/experiments/{experiment}/rows/{run}",
            f"/experiments/{experiment}",
            f"/datasets/{dataset}",
            "/experiments",
        ):
            page = client.get(path)
            assert page.status_code == 200, path
        assert SHOWN in client.get(f"/experiments/{experiment}/rows/{run}").text
        assert SHOWN in client.get(f"/datasets/{dataset}").text
        detail = client.get(f"/api/experiments/{experiment}/rows/{run}")
        assert detail.status_code == 200
        body = detail.json()
        assert body["outputs"] == {"answer": SHOWN, SHOWN: 1}
        assert body["inputs"] == {"q": SHOWN}
        examples = client.get(f"/api/datasets/{dataset}/examples").json()
        assert examples["examples"][0]["metadata"] == {SHOWN: SHOWN}
        assert client.get(f"/api/experiments/{experiment}/rows").status_code == 200


# --- the token in the real access log ----------------------------------------------------

TOKEN = "log-token-5f3a9c"


@pytest.fixture
def logged_server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    path = tmp_path / "served.db"
    store = open_store(str(path))
    build_scenario(store)
    store.close()
    port = free_port()
    code = f"from assay.ui import serve; serve({f'sqlite:///{path}'!r}, host='127.0.0.1', port={port})"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "ASSAY_UI_TOKEN": TOKEN},
    )  # fmt: skip
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}", process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def spellings(token: str) -> list[str]:
    every_char = "".join(f"%{ord(c):02X}" for c in "token")
    encoded_value = "".join(f"%{ord(c):02x}" for c in token)
    return [
        f"?token={token}",
        f"?%74oken={token}",
        f"?{every_char}={token}",
        f"?%74%6f%6b%65%6e={encoded_value}",
        f"?page=1&token={token}&token={token}",
        f"?TOKEN={token}",
        f"?a=1;token={token}",
        f"?token={quote(token[:4])}{token[4:]}",
        f"?q={token}",
        f"?%2574oken={token}",
        f"?+token={token}",
    ]


@pytest.mark.slow
def test_no_spelling_of_the_token_reaches_the_access_log(
    logged_server: tuple[str, subprocess.Popen[str]],
) -> None:
    url, process = logged_server
    sent = []
    with httpx.Client(base_url=url) as client:
        for spelling in spellings(TOKEN):
            for path in ("/api/experiments", "/experiments", f"/experiments/{TOKEN}"):
                request = client.build_request("GET", url)
                request.url = httpx.URL(url + path + spelling)  # raw, as a visitor would type it
                answer = client.send(request)
                sent.append((path + spelling, answer.status_code))
        assert (
            client.get(
                "/api/experiments", params={}, headers={"authorization": f"Bearer {TOKEN}"}
            ).status_code
            == 200
        )
    authenticated = [s for s, status in sent if status in (200, 303) and "/experiments/" not in s]
    assert any("%74oken" in s for s in authenticated)  # the encoded spelling still authenticates...
    process.terminate()
    output, _ = process.communicate(timeout=10)
    assert output.count('"GET /') >= len(sent)  # ...every request was logged...
    for text in (output, unquote(output), unquote_plus(output)):
        assert TOKEN not in text  # ...and never the token, however it was spelled
