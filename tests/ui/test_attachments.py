"""An example's files in the UI: listed on the row page (the files of the version the
experiment ran on) and on the example's edit page, names escaped; downloaded as
attachments in a type that never runs in the UI's origin. Headers on both stores; in real
Chromium, an attacker's HTML and SVG files download and run nothing."""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Dialog, Page
from playwright.sync_api import Error as PlaywrightError
from ui_testdata import LiveServer

from assay import Client, evaluate
from assay.ui import create_app

HOSTILE_HTML = b"<html><body><script>window.__xss = 'html'; alert('html')</script></body></html>"
HOSTILE_SVG = (
    b"<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"window.__xss = 'svg'; alert('svg')\">"
    b"<script>window.__xss = 'svg'</script></svg>"
)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
ODD_NAME = "<img src=x onerror=alert(1)> & ../../etc/passwd"


@dataclass(frozen=True)
class Stored:
    client: Client
    dataset_id: str
    example_id: str
    row_url: str


def store_files(url: str) -> Stored:
    client = Client(url)
    dataset = client.create_dataset("files")
    [example_id] = client.create_examples(
        dataset_name="files",
        examples=[
            {
                "inputs": {"q": "?"},
                "attachments": {
                    "page.html": ("text/html", HOSTILE_HTML),
                    "logo.svg": ("image/svg+xml", HOSTILE_SVG),
                    "photo.png": ("image/png", PNG),
                    ODD_NAME: ("text/plain", b"odd"),
                },
            }
        ],
    )["example_ids"]
    results = evaluate(lambda inputs: {"ok": True}, data="files", client=client, experiment_prefix="files")
    run = results[0]["run"]
    client.update_example(example_id, attachments_operations={"retain": ["photo.png"]})  # a later version
    row_url = f"/experiments/{results.experiment_name}/rows/{run.id}"
    return Stored(client, str(dataset.id), example_id, row_url)


# the tests below only read what store_files wrote: once per backend for the module
@pytest.fixture(scope="module")
def stored(module_store_url: str) -> Iterator[Stored]:
    made = store_files(module_store_url)
    yield made
    made.client.close()


@pytest.fixture(scope="module")
def web(stored: Stored) -> Iterator[TestClient]:
    with TestClient(create_app(stored.client.store), base_url="http://127.0.0.1") as http:
        yield http


def download_url(stored: Stored, name: str, version: int | None = None) -> str:
    url = f"/datasets/{stored.dataset_id}/examples/{stored.example_id}/attachment?name={quote(name, safe='')}"
    return url if version is None else f"{url}&version={version}"


def test_the_row_page_lists_the_files_of_the_version_it_ran_on(stored: Stored, web: TestClient) -> None:
    page = web.get(stored.row_url)
    assert page.status_code == 200
    section = page.text[page.text.index('id="attachments"') :]
    for name in ("page.html", "logo.svg", "photo.png"):
        assert f">{name}</a>" in section
    assert "text/html" in section and "image/svg+xml" in section
    assert html.escape(ODD_NAME) in section and ODD_NAME not in page.text  # escaped, never raw
    assert "version=1" in section  # links name the version the experiment ran on
    then = web.get(f"/datasets/{stored.dataset_id}?version=1").text
    now = web.get(f"/datasets/{stored.dataset_id}").text
    assert ">page.html</a>" in then and ">photo.png</a>" in then and html.escape(ODD_NAME) in then
    assert ">page.html</a>" not in now and ">photo.png</a>" in now  # each version's own files
    edit = web.get(f"/datasets/{stored.dataset_id}/examples/{stored.example_id}/edit")
    listed = edit.text[edit.text.index('id="attachments"') :]
    assert ">photo.png</a>" in listed and "page.html" not in listed  # now: only the file kept


@pytest.mark.parametrize(
    "name, sent_as",
    [
        ("page.html", "application/octet-stream"),
        ("logo.svg", "application/octet-stream"),
        ("photo.png", "image/png"),
        (ODD_NAME, "text/plain"),
    ],
)
def test_a_download_is_an_attachment_in_a_type_that_runs_nothing(
    stored: Stored, web: TestClient, name: str, sent_as: str
) -> None:
    answer = web.get(download_url(stored, name, version=1))
    assert answer.status_code == 200
    assert answer.headers["content-type"].split(";")[0] == sent_as
    assert answer.headers["content-disposition"].startswith("attachment; filename=")
    assert "/" not in answer.headers["content-disposition"].split("filename=")[1].split(";")[0]
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in answer.headers["content-security-policy"]
    expected = {"page.html": HOSTILE_HTML, "logo.svg": HOSTILE_SVG, "photo.png": PNG, ODD_NAME: b"odd"}[name]
    assert answer.content == expected


def test_a_file_not_in_that_version_is_not_found_naming_it(stored: Stored, web: TestClient) -> None:
    assert web.get(download_url(stored, "photo.png")).content == PNG  # now
    gone = web.get(download_url(stored, "page.html"))  # dropped by the later version
    assert gone.status_code == 404 and "page.html" in gone.text
    assert web.get(download_url(stored, "page.html", version=1)).status_code == 200


@pytest.mark.slow
def test_in_chromium_hostile_files_download_and_run_nothing(page: Page, tmp_path: Path) -> None:
    made = store_files(f"sqlite:///{tmp_path / 'ui.db'}")
    dialogs: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    try:
        with LiveServer(made.client.store) as server:
            page.goto(server.url + made.row_url)
            for name in ("page.html", "logo.svg"):
                with page.expect_download() as started:
                    page.locator("#attachments a.attachment", has_text=name).click()
                download = started.value
                assert download.suggested_filename == name
                assert Path(download.path()).read_bytes() in (HOSTILE_HTML, HOSTILE_SVG)
            assert page.evaluate("window.__xss") is None
            assert page.url == server.url + made.row_url  # still the row page: nothing opened
            for name in ("page.html", "logo.svg"):  # opened as an address, not by the link's download
                with page.expect_download() as started:
                    with pytest.raises(PlaywrightError, match="Download is starting"):
                        page.goto(server.url + download_url(made, name, version=1))
                assert started.value.suggested_filename == name
                assert page.evaluate("window.__xss") is None
    finally:
        made.client.close()
    assert dialogs == []
