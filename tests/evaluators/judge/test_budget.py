"""``max_cost``: a run stops starting rows once its judge calls cost that much; the rest are
stored as failed runs saying why, and a resume with a higher budget runs exactly those."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.cli import main
from assay.evaluators import CriteriaEvaluator
from assay.llm import ModelNotConfiguredError, Price
from assay.testing import FakeOpenAIServer, Reply

# 1,000 prompt tokens at $1 per million: every judge call costs exactly $0.001
PRICED = Reply(
    content={"reasoning": "r", "value": "Y"}, usage={"prompt_tokens": 1000, "completion_tokens": 0}
)


def run(server: FakeOpenAIServer, client: assay.Client, max_cost: float, resume: bool = False) -> Any:
    judge = CriteriaEvaluator("helpfulness", model=server.chat_model(price=Price(1.0, 0.0)))
    return assay.evaluate(
        lambda inputs: inputs["i"],
        data="rows",
        evaluators=[judge],
        client=client,
        experiment="budgeted",
        resume=resume,
        max_concurrency=1,
        max_cost=max_cost,
    )


def test_the_budget_stops_rows_and_a_resume_with_more_runs_the_rest(tmp_path: Path) -> None:
    client = assay.Client(database_url=f"sqlite:///{tmp_path / 'a.db'}")
    client.create_dataset("rows")
    client.create_examples(inputs=[{"i": i} for i in range(30)], dataset_name="rows")
    with FakeOpenAIServer(handler=lambda r: PRICED) as server:
        first = run(server, client, max_cost=0.0095)
        assert len(server.chat_requests) == 10  # the 10th call reaches the cap: no 11th row
        metric = first.aggregate["helpfulness"]
        assert metric.n == 10 and metric.skipped == 20 and metric.errors == 0
        assert first.usage()["cost_usd"] == pytest.approx(0.010)
        skipped = [row["run"] for row in first if row["run"].error]
        assert len(skipped) == 20
        assert all("judge budget max_cost=$0.0095 reached" in (r.error or "") for r in skipped)
        second = run(server, client, max_cost=1.0, resume=True)
        assert len(server.chat_requests) == 30  # only the 20 skipped rows were judged now
    metric = second.aggregate["helpfulness"]
    assert metric.n == 30 and metric.skipped == 0 and second.target_errors == 0


def test_a_budget_needs_the_judge_models_price(tmp_path: Path) -> None:
    client = assay.Client(database_url="sqlite://")
    with FakeOpenAIServer(handler=lambda r: PRICED) as server:
        results = assay.evaluate(
            lambda inputs: inputs,
            data=[{"inputs": {"i": 1}}],
            evaluators=[CriteriaEvaluator("helpfulness", model=server.chat_model())],
            client=client,
            max_cost=1.0,
        )
        assert server.chat_requests == []
    (row,) = list(results)
    error = row["evaluation_results"]["results"][0].error or ""
    assert "max_cost needs the price" in error and "ASSAY_PRICES" in error
    assert issubclass(ModelNotConfiguredError, ValueError)


def test_the_price_table_gives_costs_without_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"fake-judge": {"input_per_million": 2.0, "output_per_million": 0}}))
    monkeypatch.setenv("ASSAY_PRICES", str(table))
    with FakeOpenAIServer(handler=lambda r: PRICED) as server:
        results = assay.evaluate(
            lambda inputs: inputs,
            data=[{"inputs": {"i": i}} for i in range(3)],
            evaluators=[CriteriaEvaluator("helpfulness", model=server.chat_model(cache=False))],
            client=assay.Client(database_url="sqlite://"),
        )
    assert results.usage()["cost_usd"] == pytest.approx(0.006)
    assert results.judge_usage()["helpfulness"]["cost_usd"] == pytest.approx(0.006)
    table.write_text('{"fake-judge": {"input_per_million": "cheap"}}')
    with pytest.raises(ValueError, match="needs numbers"):
        from assay.llm.prices import price_for

        price_for("fake-judge")


def test_max_cost_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "budget_app.py"
    module.write_text(
        "from assay.evaluators import CriteriaEvaluator\n"
        "from assay.llm import ChatModel, Price\n"
        "import os\n"
        "def target(inputs):\n    return inputs\n"
        "judge = CriteriaEvaluator('helpfulness', model=ChatModel(model='fake-judge', "
        "base_url=os.environ['JUDGE_URL'], price=Price(1.0, 0.0)))\n"
    )
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"inputs": {"i": i}}) + "\n" for i in range(8)))
    monkeypatch.syspath_prepend(str(tmp_path))
    db = str(tmp_path / "cli.db")
    with FakeOpenAIServer(handler=lambda r: PRICED) as server:
        monkeypatch.setenv("JUDGE_URL", server.base_url)
        args = [
            "--db",
            db,
            "run",
            "budget_app:target",
            "--data",
            str(data),
            "--evaluator",
            "budget_app:judge",
        ]
        main([*args, "--experiment", "cli", "--concurrency", "1", "--max-cost", "0.0025"])
        assert len(server.chat_requests) == 3
        main([*args, "--experiment", "cli", "--concurrency", "1", "--max-cost", "1", "--resume"])
        assert len(server.chat_requests) == 8
