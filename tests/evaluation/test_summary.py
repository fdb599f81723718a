"""Summary evaluators: bound by name, first class in results, the store and the report."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from assay import Client
from assay.report.terminal import print_report


@pytest.fixture
def client(any_client: Client) -> Client:
    """The tests here exercise the store: each runs on SQLite and on PostgreSQL."""
    return any_client


TOXIC = [
    ("You are an idiot", "Toxic"),
    ("Nice weather today", "Not toxic"),
    ("Shut up, loser", "Toxic"),
    ("Thanks for your help", "Not toxic"),
]


def make_dataset(ls_client: Client) -> str:
    name = "Toxic queries"
    ls_client.create_dataset(name)
    ls_client.create_examples(
        inputs=[{"text": text} for text, _ in TOXIC],
        # The seed's row evaluator reads "label" and its F1 reads "class": carry both.
        outputs=[{"label": label, "class": label} for _, label in TOXIC],
        dataset_name=name,
    )
    return name


# --- seed 000, as written there (the import line and the local dataset changed) -------
def f1_score_summary_evaluator(outputs: list[dict], reference_outputs: list[dict]) -> dict:
    true_positives = 0
    false_positives = 0
    false_negatives = 0

    for output_dict, reference_output_dict in zip(outputs, reference_outputs):
        output = output_dict["class"]
        reference_output = reference_output_dict["class"]

        if output == "Toxic" and reference_output == "Toxic":
            true_positives += 1
        elif output == "Toxic" and reference_output == "Not toxic":
            false_positives += 1
        elif output == "Not toxic" and reference_output == "Toxic":
            false_negatives += 1

    if true_positives == 0:
        return {"key": "f1_score", "score": 0.0}

    precision = true_positives / (true_positives + false_positives)
    recall = true_positives / (true_positives + false_negatives)
    f1_score = 2 * (precision * recall) / (precision + recall)

    return {"key": "f1_score", "score": f1_score}


def test_seed_000_f1_example_runs_as_written(tmp_path) -> None:
    ls_client = Client(str(tmp_path / "seed.db"))
    dataset = make_dataset(ls_client)

    def bad_classifier(inputs: dict) -> dict:
        return {"class": "Not toxic"}

    def correct(outputs: dict, reference_outputs: dict) -> bool:
        """行级正确性评估器。"""
        return outputs["class"] == reference_outputs["label"]

    def keyword_classifier(inputs: dict) -> dict:
        return {
            "class": "Toxic" if any(w in inputs["text"] for w in ("idiot", "loser", "Nice")) else "Not toxic"
        }

    results = ls_client.evaluate(
        bad_classifier,
        data=dataset,
        evaluators=[correct],
        summary_evaluators=[f1_score_summary_evaluator],
    )
    [summary] = results.summary_results.results
    assert (summary.key, summary.score) == ("f1_score", 0.0)
    assert results.aggregate["correct"].mean == 0.5

    better = ls_client.evaluate(
        keyword_classifier,
        data=dataset,
        evaluators=[correct],
        summary_evaluators=[f1_score_summary_evaluator],
        experiment_prefix="Toxic Queries",
    )
    # tp=2, fp=1 ("Nice weather"), fn=0: precision 2/3, recall 1, f1 0.8
    assert better.summary_results.results[0].score == 0.8
    assert better.experiment_name.startswith("Toxic Queries-")

    stored = ls_client.read_experiment(better.experiment_name)
    assert [(r.key, r.score) for r in stored.summary_results.results] == [("f1_score", 0.8)]
    out = io.StringIO()
    print_report(stored, Console(file=out, width=120))
    assert "f1_score" in out.getvalue() and "0.800" in out.getvalue()


def test_summary_parameters_and_forms(client: Client, examples: list[dict]) -> None:
    seen: dict = {}

    def everything(runs, examples, inputs, outputs, reference_outputs, evaluation_results):
        seen.update(
            runs=runs,
            examples=examples,
            inputs=inputs,
            outputs=outputs,
            reference=reference_outputs,
            results=evaluation_results,
        )
        return [{"key": "count", "score": len(runs)}, {"key": "label", "value": "ok"}]

    def legacy(r, e) -> float:
        return len(r) / len(e)

    def pass_rate(evaluation_results) -> float:
        passed = [all(x.score for x in row) for row in evaluation_results]
        return sum(passed) / len(passed)

    def is_even(inputs) -> bool:
        return inputs["x"] % 2 == 0

    results = client.evaluate(
        lambda inputs: {"y": 2 * inputs["x"]},
        data=examples,
        evaluators=[is_even],
        summary_evaluators=[everything, legacy, pass_rate],
    )
    assert [r.key for r in results.summary_results.results] == ["count", "label", "legacy", "pass_rate"]
    by_key = {r.key: r for r in results.summary_results.results}
    assert by_key["count"].score == 6 and by_key["label"].value == "ok"
    assert by_key["legacy"].score == 1.0 and by_key["pass_rate"].score == 0.5
    assert [i["x"] for i in seen["inputs"]] == list(range(6))
    assert [o["y"] for o in seen["outputs"]] == [2 * i for i in range(6)]
    assert seen["reference"] == [{"y": 2 * i} for i in range(6)]
    assert [e.inputs["x"] for e in seen["examples"]] == list(range(6))
    assert [r[0].key for r in seen["results"]] == ["is_even"] * 6


def test_failing_summary_evaluator_is_an_error_result(client: Client, examples: list[dict]) -> None:
    def broken(outputs) -> float:
        return 1 / 0

    results = client.evaluate(lambda inputs: inputs, data=examples, summary_evaluators=[broken])
    [result] = results.summary_results.results
    assert result.score is None and result.error == "ZeroDivisionError: division by zero"
    assert "ZeroDivisionError" in result.metadata["traceback"]
    stored = client.read_experiment(results.experiment_name).summary_results.results
    assert stored[0].error == result.error
