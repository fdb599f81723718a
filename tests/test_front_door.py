"""The front door is typed and strict: ``evaluate`` and its relatives refuse a misspelt
keyword at run time (naming the closest valid one), and a type checker rejects a misspelt
keyword or a wrong type before anything runs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import assay
from assay import Client


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"answer": inputs["q"]}


def _ask(client: Client) -> None:
    client.create_dataset("front")
    client.create_examples(inputs=[{"q": 1}], dataset_name="front")


CALLS: dict[str, Callable[[Client], Any]] = {
    "evaluate": lambda c: assay.evaluate(target, dataa="front", client=c),
    "aevaluate": lambda c: asyncio.run(assay.aevaluate(target, dataa="front", client=c)),
    "Client.evaluate": lambda c: c.evaluate(target, dataa="front"),  # type: ignore[call-arg]
    "Client.aevaluate": lambda c: asyncio.run(c.aevaluate(target, dataa="front")),  # type: ignore[call-arg]
    "Client.run_on_dataset": lambda c: c.run_on_dataset("front", target, dataa=1),  # type: ignore[call-arg]
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_misspelt_keyword_is_refused_naming_the_closest_one(client: Client, call: str) -> None:
    _ask(client)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'dataa'; did you mean 'data'\?"):
        CALLS[call](client)
    assert client.list_experiments() == [], "nothing ran"


def test_a_keyword_like_nothing_lists_the_valid_ones(client: Client) -> None:
    _ask(client)
    with pytest.raises(TypeError, match=r"'zzzz'; it takes .*max_concurrency.*num_repetitions"):
        assay.evaluate(target, data="front", client=client, zzzz=1)  # type: ignore[call-overload]


def test_evaluate_existing_refuses_a_misspelt_keyword(client: Client) -> None:
    _ask(client)
    results = assay.evaluate(target, data="front", client=client, experiment="base")
    with pytest.raises(TypeError, match=r"'evaluator'; did you mean 'evaluators'\?"):
        assay.evaluate_existing(results.experiment_name, evaluator=[], client=client)  # type: ignore[call-arg]


def test_the_keyword_check_keeps_aevaluate_a_coroutine_function() -> None:
    assert asyncio.iscoroutinefunction(assay.aevaluate)
    assert asyncio.iscoroutinefunction(assay.Client.aevaluate)


PROBE = """\
from typing import Any
import assay
from assay import Client, evaluate, aevaluate, evaluate_existing
from assay.evaluators import (
    APICallEvaluator, CompositeEvaluator, DataTransformationEvaluator, ToolCodeEvaluator,
    TrajectoryJudgeEvaluator, TrajectoryMatchEvaluator, UnitTestGenerationEvaluator,
)

def t(inputs: dict[str, Any]) -> dict[str, Any]:
    return inputs

async def main(client: Client) -> None:
    ok = evaluate(t, data="d", max_concurrency=3, num_repetitions=2, error_handling="raise")
    ok.experiment_name
    ok2 = await aevaluate(t, data="d", blocking=False)
    ok2.experiment_name
    client.evaluate(t, data="d", shard=(0, 2))
    client.run_on_dataset("d", t, num_repetitions=2)
    evaluate_existing("exp", evaluators=[], client=client)
    evaluate(t, dataa="d")  # E: misspelt
    evaluate(t, data="d", max_concurency=3)  # E: misspelt
    evaluate(t, data="d", num_repetitions="three")  # E: wrong type
    await aevaluate(t, data="d", error_handling="explode")  # E: wrong literal
    client.evaluate(t, dataa="d")  # E: misspelt
    client.evaluate(t, data="d", num_repetitions="three")  # E: wrong type
    await client.aevaluate(t, max_concurency=3)  # E: misspelt
    client.run_on_dataset("d", t, num_repetition=2)  # E: misspelt
    evaluate_existing("exp", evaluator=[])  # E: misspelt
    reveal_type(APICallEvaluator)
    reveal_type(CompositeEvaluator)
    reveal_type(DataTransformationEvaluator)
    reveal_type(ToolCodeEvaluator)
    reveal_type(TrajectoryJudgeEvaluator)
    reveal_type(TrajectoryMatchEvaluator)
    reveal_type(UnitTestGenerationEvaluator)
"""


@pytest.mark.slow
def test_a_type_checker_rejects_misspelt_keywords_and_wrong_types(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent", str(probe)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    lines = result.stdout.splitlines()
    errors = {int(line.split(":")[1]) for line in lines if ": error:" in line}
    expected = {n for n, line in enumerate(PROBE.splitlines(), 1) if "# E:" in line}
    assert errors == expected, result.stdout
    revealed = [line for line in lines if "Revealed type" in line]
    assert len(revealed) == 7 and not [line for line in revealed if '"Any"' in line], textwrap.indent(
        "\n".join(revealed), "  "
    )
