"""LangSmith's Client options: server settings are accepted and ignored with one warning
that says where assay keeps results; anything else is refused by name."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from assay import Client
from assay.client import LocalStoreWarning


def test_api_key_and_url_give_one_warning_naming_the_store(tmp_path: Path) -> None:
    database = tmp_path / "here.db"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client = Client(str(database), api_key="x", api_url="http://127.0.0.1:9")
    assert [type(w.message) for w in caught] == [LocalStoreWarning]
    text = str(caught[0].message)
    assert str(database) in text and "api_key, api_url" in text
    assert caught[0].filename == __file__  # points at the caller's line
    client.close()


def test_a_url_as_first_argument_is_langsmiths_api_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", str(tmp_path / "env.db"))
    with pytest.warns(LocalStoreWarning, match="api_url"):
        client = Client("https://api.smith.langchain.com")
    assert client.store.url.endswith("env.db")  # not a store at that address
    client.close()


def test_no_warning_without_server_options(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Client(str(tmp_path / "a.db"), api_key=None).close()


def test_unknown_options_are_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="'colour'"):
        Client(str(tmp_path / "a.db"), colour="red")


def test_flush_has_nothing_to_do(client: Client) -> None:
    assert client.flush() is None
