"""Targets take what LangSmith passes: ``(inputs)``, or parameters named ``inputs``,
``attachments`` and ``metadata`` in any order; anything else fails before a row runs."""

from __future__ import annotations

from typing import Any

import pytest

from assay import Client, Example, evaluate
from assay.evaluation._target import TargetError

EXAMPLE = Example(
    inputs={"q": "hi"},
    outputs={"a": "HI"},
    metadata={"lang": "en"},
    attachments={"file": {"mime_type": "text/plain", "reader": b"hello"}},
)


def outputs_of(target: Any, client: Client) -> dict:
    [row] = list(evaluate(target, data=[EXAMPLE], client=client, upload_results=False))
    assert row["run"].error is None, row["run"].error
    return row["run"].outputs


def test_inputs_metadata_and_attachments_in_any_order(client: Client) -> None:
    def with_metadata(inputs: dict, metadata: dict) -> dict:
        return {"q": inputs["q"], "lang": metadata["lang"]}

    def with_attachments(inputs: dict, attachments: dict) -> dict:
        return {"files": sorted(attachments)}

    def all_three(metadata: dict, inputs: dict, attachments: dict) -> dict:
        return {"lang": metadata["lang"], "q": inputs["q"], "n": len(attachments)}

    def any_name(question: dict) -> dict:
        return {"q": question["q"]}

    def with_default(inputs: dict, config: Any = None) -> dict:
        return {"config": config}

    assert outputs_of(with_metadata, client) == {"q": "hi", "lang": "en"}
    assert outputs_of(with_attachments, client) == {"files": ["file"]}
    assert outputs_of(all_three, client) == {"lang": "en", "q": "hi", "n": 1}
    assert outputs_of(any_name, client) == {"q": "hi"}
    assert outputs_of(with_default, client) == {"config": None}


def test_missing_parts_arrive_empty(client: Client) -> None:
    def both(inputs: dict, attachments: dict, metadata: dict) -> dict:
        return {"attachments": attachments, "metadata": metadata}

    [row] = list(evaluate(both, data=[{"inputs": {"q": 1}}], client=client))
    assert row["run"].outputs == {"attachments": {}, "metadata": {}}


@pytest.mark.parametrize(
    "target, message",
    [
        (lambda: {}, "must accept at least one positional argument"),
        (lambda inputs, extra: {}, r"\['extra'\] is not"),
        (lambda inputs, attachments, metadata, more: {}, "at most three"),
        (lambda inputs, *, flag: {}, "keyword-only parameters"),
    ],
)
def test_signatures_langsmith_refuses_fail_before_any_row(client: Client, target: Any, message: str) -> None:
    with pytest.raises(TargetError, match=message):
        evaluate(target, data=[EXAMPLE], client=client)
    assert client.store.list_experiments() == []


def test_the_evaluator_sees_attachments_by_name(client: Client) -> None:
    def has_file(attachments: dict) -> bool:
        return "file" in attachments

    [row] = list(evaluate(lambda inputs: {}, data=[EXAMPLE], evaluators=[has_file], client=client))
    assert row["evaluation_results"]["results"][0].score is True


def test_run_on_dataset_takes_langsmiths_factory_form() -> None:
    """``llm_or_chain_factory=lambda: chain`` used to fail with TargetError."""
    from assay import Client

    class Chain:
        def invoke(self, inputs: dict) -> dict:
            return {"output": inputs["q"].upper()}

    client = Client("sqlite://")
    client.create_dataset("ds")
    client.create_examples(
        inputs=[{"q": "a"}, {"q": "b"}], outputs=[{"output": "A"}, {"output": "B"}], dataset_name="ds"
    )
    made = []

    def factory() -> Chain:
        made.append(1)
        return Chain()

    for target in (factory, lambda: Chain(), Chain(), lambda inputs: {"output": inputs["q"].upper()}):
        results = client.run_on_dataset("ds", target, evaluators=["exact_match"])
        assert results.aggregate["exact_match"].mean == 1.0
    assert made == [1]  # a factory is called once, not per row
