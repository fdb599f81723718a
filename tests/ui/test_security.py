"""Read-only, loopback-only without a token, every request carries the token with one,
and headers that keep content inert."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from ui_testdata import Scenario

from assay.ui import create_app
from assay.ui.errors import UIConfigError
from assay.ui.security import COOKIE, is_loopback_host, session_value
from assay.ui.server import check_bind, redact, resolve_token

TOKEN = "s3cret-token-for-tests"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.5.6.7", "localhost", "::1", "[::1]", "app.localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", "localhost.evil.com", ""])
def test_other_hosts_are_not_loopback(host: str) -> None:
    assert not is_loopback_host(host)


def test_a_public_host_needs_a_token() -> None:
    with pytest.raises(UIConfigError, match="refusing to serve on '0.0.0.0' without a token"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", TOKEN)
    check_bind("127.0.0.1", None)


def test_the_token_comes_from_the_argument_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_UI_TOKEN", "from-the-environment")
    assert resolve_token(None) == "from-the-environment"
    assert resolve_token(TOKEN) == TOKEN
    monkeypatch.setenv("ASSAY_UI_TOKEN", "")
    assert resolve_token(None) is None
    with pytest.raises(UIConfigError, match="at least 8 characters"):
        resolve_token("short")


def test_tokens_are_redacted_from_logged_addresses() -> None:
    assert redact("GET /experiments?token=abc123&page=2") == "GET /experiments?token=<redacted>&page=2"


def test_without_a_token_only_loopback_host_headers_are_served(scenario: Scenario) -> None:
    app = create_app(scenario.store)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.get("/experiments").status_code == 200
        assert client.get("/experiments", headers={"host": "localhost:8765"}).status_code == 200
        rebound = client.get("/api/experiments", headers={"host": "attacker.example:8765"})
        assert rebound.status_code == 403 and "not a loopback address" in rebound.text


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_the_read_only_ui_refuses_every_write(scenario: Scenario, method: str) -> None:
    with TestClient(create_app(scenario.store, read_only=True), base_url="http://127.0.0.1") as client:
        response = client.request(method, "/api/experiments/baseline")
        assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"
    assert scenario.store.get_experiment(name="baseline") is not None


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
def test_the_ui_writes_with_post_only(scenario: Scenario, method: str) -> None:
    with TestClient(create_app(scenario.store), base_url="http://127.0.0.1") as client:
        response = client.request(method, "/api/experiments/baseline", headers={"origin": "http://127.0.0.1"})
        assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD, POST"
    assert scenario.store.get_experiment(name="baseline") is not None


def test_with_a_token_every_request_must_carry_it(scenario: Scenario) -> None:
    app = create_app(scenario.store, token=TOKEN)
    with TestClient(app, base_url="http://192.0.2.10:8765") as client:
        api = client.get("/api/experiments")
        assert api.status_code == 401 and "needs its token" in api.json()["detail"]
        assert client.get("/experiments").status_code == 401
        assert client.get("/static/app.css").status_code == 401
        assert (
            client.get("/api/experiments", headers={"authorization": "Bearer wrong-token"}).status_code == 401
        )
        assert client.get("/api/experiments", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert client.get(f"/api/experiments?token={TOKEN}").status_code == 200


def test_a_page_visit_trades_the_token_for_a_cookie(scenario: Scenario) -> None:
    app = create_app(scenario.store, token=TOKEN)
    with TestClient(app, base_url="http://192.0.2.10:8765") as client:
        visit = client.get(f"/experiments?q=base&token={TOKEN}", follow_redirects=False)
        assert visit.status_code == 303 and visit.headers["location"] == "/experiments?q=base"
        cookie = visit.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
        assert client.cookies.get(COOKIE) == session_value(TOKEN)
        assert client.get("/experiments/baseline").status_code == 200
        client.cookies.clear()
        client.cookies.set(COOKIE, "forged")
        assert client.get("/experiments/baseline").status_code == 401


def test_headers_forbid_inline_script_framing_and_sniffing(scenario: Scenario) -> None:
    with TestClient(create_app(scenario.store), base_url="http://127.0.0.1") as client:
        response = client.get("/experiments/baseline")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["server-timing"].startswith("app;dur=")
