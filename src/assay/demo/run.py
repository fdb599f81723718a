"""The demo: a bundled dataset, a keyword classifier, two row evaluators, F1 over the experiment."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from assay.client import Client
from assay.evaluation import ExperimentResults, evaluate
from assay.schemas import Example, Run

__all__ = [
    "DATASET_NAME",
    "correct",
    "ensure_dataset",
    "explained",
    "f1_score_summary_evaluator",
    "keyword_classifier",
    "run_demo",
]


DATASET_NAME = "Toxic queries (demo)"
_INSULTS = ("idiot", "stupid", "loser", "dumbest", "disgusting", "garbage", "moron", "fraud", "hate")


def keyword_classifier(inputs: dict[str, Any]) -> dict[str, Any]:
    """The target: a deliberately naive classifier, so the scores have something to show."""
    text = inputs["text"].lower()
    hits = [word for word in _INSULTS if word in text]
    return {"class": "Toxic" if hits else "Not toxic", "matched": hits}


def correct(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    """Row evaluator bound by name: did the class match the label?"""
    return bool(outputs["class"] == reference_outputs["label"])


def explained(run: Run, example: Example) -> dict[str, Any]:
    """Row evaluator in the legacy (run, example) form: did a Toxic verdict cite a word?"""
    outputs = run.outputs or {}
    if outputs.get("class") != "Toxic":
        return {"key": "explained", "score": None, "comment": "not flagged: nothing to explain"}
    return {"key": "explained", "score": bool(outputs.get("matched"))}


def f1_score_summary_evaluator(
    outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]
) -> dict[str, Any]:
    """The F1 summary evaluator of the LangSmith quick-start, as written there."""
    true_positives = false_positives = false_negatives = 0
    for output_dict, reference_output_dict in zip(outputs, reference_outputs):
        output, reference = output_dict["class"], reference_output_dict["label"]
        if output == "Toxic" and reference == "Toxic":
            true_positives += 1
        elif output == "Toxic" and reference == "Not toxic":
            false_positives += 1
        elif output == "Not toxic" and reference == "Toxic":
            false_negatives += 1
    if true_positives == 0:
        return {"key": "f1_score", "score": 0.0}
    precision = true_positives / (true_positives + false_positives)
    recall = true_positives / (true_positives + false_negatives)
    return {"key": "f1_score", "score": 2 * precision * recall / (precision + recall)}


def ensure_dataset(client: Client) -> None:
    if client.has_dataset(dataset_name=DATASET_NAME):
        return
    source = resources.files("assay.demo").joinpath("toxic_queries.jsonl").read_text("utf-8")
    records = [json.loads(line) for line in source.splitlines() if line.strip()]
    client.create_dataset(DATASET_NAME, description="Bundled with assay for `assay demo`")
    client.create_examples(examples=records, dataset_name=DATASET_NAME)


def run_demo(database_url: str | None = None) -> ExperimentResults:
    client = Client(database_url)
    ensure_dataset(client)
    return evaluate(
        keyword_classifier,
        data=DATASET_NAME,
        evaluators=[correct, explained],
        summary_evaluators=[f1_score_summary_evaluator],
        experiment_prefix="toxic-demo",
        client=client,
        progress=True,
    )
