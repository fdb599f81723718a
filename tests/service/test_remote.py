"""RemoteEvaluator against a real service: the same results as the local evaluators, keys as
the server sent them, values exact through the wire, failures as errors (never scores)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_testing import LIGHT, TOKEN, LiveService

from assay.client import Client
from assay.evaluation import evaluate
from assay.evaluation._binding import bind_row_evaluator
from assay.schemas import EvaluationResult, Example, Run
from assay.service import RemoteEvaluator

ODD_VALUES: list[Any] = [
    2**80,  # beyond 64 bits: orjson cannot, the codec's fallback must
    -(2**70) + 1,
    "naïve 中文 🙂",
    "lone \udc80 surrogate",
    {"nested": [1, 2.5, None, True, {"deep": "x"}]},
    1e308,
    "",
]


@pytest.fixture(scope="module")
def service() -> Iterator[LiveService]:
    with LiveService(LIGHT) as live:
        yield live


def rows() -> list[tuple[Run, Example]]:
    pairs = []
    for i, value in enumerate(ODD_VALUES):
        answer = value if i % 2 == 0 else "wrong"
        example = Example(inputs={"q": f"q{i}"}, outputs={"answer": value}, metadata={"i": i})
        pairs.append((Run(inputs=example.inputs, outputs={"answer": answer}), example))
    return pairs


def local_results(evaluator: Any, run: Run, example: Example) -> list[EvaluationResult]:
    """What ``evaluate()`` gets from an evaluator, sync or async."""
    bound = bind_row_evaluator(evaluator)
    if bound.is_async:
        return asyncio.run(bound.call_async(run, example))
    return bound.call_sync(run, example)


def remote_results(service: LiveService, name: str, run: Run, example: Example) -> list[EvaluationResult]:
    return local_results(RemoteEvaluator(service.url, name, retries=0), run, example)


@pytest.mark.parametrize("name", ["exact", "lengths", "async_exact"])
def test_remote_results_equal_the_local_ones_on_odd_values(service: LiveService, name: str) -> None:
    for run, example in rows():
        local = local_results(LIGHT[name], run, example)
        remote = remote_results(service, name, run, example)
        assert [r.model_dump() for r in remote] == [r.model_dump() for r in local]


def test_metric_keys_come_back_as_the_server_sent_them(service: LiveService) -> None:
    run, example = rows()[0]
    results = remote_results(service, "lengths", run, example)
    assert [r.key for r in results] == ["answer_length", "echo"]
    assert results[1].value == 2**80 and results[1].score is None
    assert all(r.source_run_id == run.id for r in results)


def test_an_evaluator_that_raises_on_the_server_is_an_error_not_a_score(service: LiveService) -> None:
    run, example = rows()[0]
    [result] = remote_results(service, "broken", run, example)
    assert result.score is None and result.key == "broken"
    assert result.error == "ValueError: this evaluator always fails"


def test_an_unknown_name_is_an_error_naming_what_is_served(service: LiveService) -> None:
    run, example = rows()[0]
    [result] = remote_results(service, "no_such_evaluator", run, example)
    assert result.score is None and result.key == "no_such_evaluator"
    assert result.error is not None and "HTTP 404" in result.error
    assert "no evaluator named 'no_such_evaluator'" in result.error and "exact" in result.error


def test_evaluate_with_remote_evaluators_stores_what_local_evaluate_stores(
    service: LiveService, tmp_path: Path
) -> None:
    client = Client(str(tmp_path / "remote.db"))
    data = [{"inputs": {"q": f"q{i}"}, "outputs": {"answer": v}} for i, v in enumerate(ODD_VALUES)]

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        i = int(inputs["q"][1:])
        return {"answer": ODD_VALUES[i] if i % 2 == 0 else "wrong"}

    def run_with(evaluators: list[Any], prefix: str) -> dict[str, list[dict[str, Any]]]:
        ran = evaluate(
            target,
            data=data,
            evaluators=evaluators,
            experiment_prefix=prefix,
            client=client,
            max_concurrency=4,
            progress=False,
        )
        by_question: dict[str, list[dict[str, Any]]] = {}
        for row in client.read_experiment(ran.experiment_name):  # as stored
            stored = row["evaluation_results"]["results"]
            by_question[row["run"].inputs["q"]] = sorted(
                (r.model_dump(exclude={"source_run_id", "metadata"}) for r in stored),
                key=lambda r: r["key"],
            )
        return by_question

    try:
        local = run_with([LIGHT["exact"], LIGHT["lengths"], LIGHT["broken"]], "local")
        remote = run_with(
            [RemoteEvaluator(service.url, n, retries=0) for n in ("exact", "lengths", "broken")],
            "remote",
        )
    finally:
        client.close()
    assert remote == local
    assert len(remote) == len(ODD_VALUES)
    assert {r["key"] for r in remote["q0"]} == {"exact", "answer_length", "echo", "broken"}


def test_the_token_is_sent_and_never_shown(tmp_path: Path) -> None:
    with LiveService(LIGHT, token=TOKEN) as live:
        run, example = rows()[0]
        [ok] = local_results(RemoteEvaluator(live.url, "exact", token=TOKEN), run, example)
        assert ok.score is True
        wrong = RemoteEvaluator(live.url, "exact", token="not-the-token-at-all", retries=3)
        [refused] = local_results(wrong, run, example)
        assert refused.score is None and refused.error is not None and "HTTP 401" in refused.error
        assert "not-the-token-at-all" not in repr(wrong) + refused.error


def test_bad_settings_are_refused_when_built() -> None:
    with pytest.raises(ValueError, match="must start with http"):
        RemoteEvaluator("127.0.0.1:8766", "exact")
    with pytest.raises(ValueError, match="timeout must be positive"):
        RemoteEvaluator("http://127.0.0.1:8766", "exact", timeout=0)
    with pytest.raises(ValueError, match="retries must be >= 0"):
        RemoteEvaluator("http://127.0.0.1:8766", "exact", retries=-1)
