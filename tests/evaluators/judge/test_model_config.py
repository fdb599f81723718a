"""Choosing the judge model: strings, ChatModel, the environment, and the error without one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from assay.evaluation._names import resolve_evaluator_name
from assay.llm import ChatModel, ModelNotConfiguredError, RetryPolicy, resolve_chat_model
from assay.llm.retry import parse_retry_after
from assay.scorers import create_summarization_scorer

SETTINGS = ("ASSAY_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY")


@pytest.mark.parametrize(
    "build",
    [
        lambda: resolve_evaluator_name("cot_qa"),
        lambda: resolve_evaluator_name("criteria"),
        lambda: create_summarization_scorer(),
        lambda: resolve_chat_model(None),
    ],
)
def test_no_model_configured_names_every_setting(build: object) -> None:
    with pytest.raises(ModelNotConfiguredError) as caught:
        build()  # type: ignore[operator]
    for setting in SETTINGS:
        assert setting in str(caught.value)


def test_openai_prefix_with_a_local_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_JUDGE_MODEL", "openai/Qwen/Qwen2.5-7B-Instruct")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1/")
    model = resolve_chat_model(None)
    assert (model.model, model.base_url, model.api_key) == (
        "Qwen/Qwen2.5-7B-Instruct",
        "http://localhost:8000/v1",
        None,
    )


def test_openai_without_a_key_is_refused_before_any_call(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelNotConfiguredError, match="OPENAI_API_KEY"):
        resolve_chat_model("openai/gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live")
    model = resolve_chat_model("openai/gpt-4o-mini")
    assert (model.model, model.base_url) == ("gpt-4o-mini", "https://api.openai.com/v1")


def test_the_key_and_url_credentials_never_show_in_repr() -> None:
    model = ChatModel(model="m", base_url="http://user:hunter2@host:8000/v1", api_key="sk-secret")
    shown = repr(model)
    assert "sk-secret" not in shown and "hunter2" not in shown
    assert "host:8000" in shown


def test_invalid_settings_are_named() -> None:
    with pytest.raises(ValueError, match="base_url"):
        ChatModel(model="m", base_url="localhost:8000")
    with pytest.raises(ValueError, match="structured_output"):
        ChatModel(model="m", structured_output="xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def test_cache_and_concurrency_defaults_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    model = ChatModel(model="m", base_url="http://h/v1")
    assert model.cache_enabled and model.concurrency == 32
    monkeypatch.setenv("ASSAY_JUDGE_CACHE", "off")
    monkeypatch.setenv("ASSAY_JUDGE_MAX_CONCURRENCY", "7")
    assert not model.cache_enabled and model.concurrency == 7
    assert ChatModel(model="m", base_url="http://h/v1", cache=True, max_concurrency=3).concurrency == 3


def test_backoff_grows_with_jitter_is_capped_and_honours_retry_after() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_delay=10.0, jitter=0.5)
    for attempt, full in ((1, 1.0), (2, 2.0), (3, 4.0)):
        delays = {policy.delay(attempt) for _ in range(50)}
        assert all(full * 0.5 <= d <= full for d in delays) and len(delays) > 1
    assert policy.delay(10) <= 10.0
    assert policy.delay(1, retry_after=7.0) == 7.0
    assert policy.delay(1, retry_after=3600.0) == 10.0  # bounded


def test_retry_after_seconds_and_http_dates() -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    later = (now + timedelta(seconds=30)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after(later, now=now) == 30.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
