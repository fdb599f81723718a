"""The text evaluators inside ``assay.evaluate``: objects and string names side by side,
results stored per row, and a missing key stored as an error, never as a zero."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import assay
from assay.embeddings import OpenAIEmbeddings
from assay.evaluators import (
    EmbeddingDistanceEvaluator,
    ExactMatchEvaluator,
    JsonValidityEvaluator,
    RougeEvaluator,
    StringDistanceEvaluator,
)
from assay.scorers import create_completeness_scorer
from assay.testing import FakeOpenAIServer

DATA = [
    {"inputs": {"question": "What is the capital of France?"}, "outputs": {"output": "Paris"}},
    {"inputs": {"question": "What is the capital of Italy?"}, "outputs": {"output": "Rome"}},
    {"inputs": {"question": "请介绍光合作用的过程和阶段"}, "outputs": {"output": "光合作用"}},
]
ANSWERS = {
    "What is the capital of France?": "Paris",
    "What is the capital of Italy?": "Milan",
    "请介绍光合作用的过程和阶段": "光合作用的过程分为光反应和暗反应两个阶段。",
}


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"output": ANSWERS[inputs["question"]]}


def letter_vector(texts: list[str]) -> list[list[float]]:
    return [[float(text.count(letter)) for letter in "aeiou光"] + [1.0] for text in texts]


def test_text_evaluators_in_an_experiment(tmp_path: Path) -> None:
    client = assay.Client(database_url=f"sqlite:///{tmp_path / 'assay.db'}")
    with FakeOpenAIServer(embeddings=letter_vector) as server:
        embeddings = OpenAIEmbeddings("e", base_url=server.base_url, api_key="sk-x")
        results = assay.evaluate(
            target,
            data=DATA,
            client=client,
            experiment="text",
            max_concurrency=2,
            evaluators=[
                ExactMatchEvaluator(),
                StringDistanceEvaluator("levenshtein"),
                EmbeddingDistanceEvaluator(embeddings=embeddings),
                RougeEvaluator(["rouge1"]),
                create_completeness_scorer(),
                "json_validity",
                JsonValidityEvaluator(output_key="missing", name="json_missing_key"),
            ],
        )
        first_calls = len(server.requests)
        assay.evaluate(
            target,
            data=DATA,
            client=client,
            experiment="again",
            evaluators=[EmbeddingDistanceEvaluator(embeddings=embeddings)],
        )
        assert len(server.requests) == first_calls  # every vector came from the store's cache

    rows = {row["example"].inputs["question"]: row["evaluation_results"]["results"] for row in results}
    france = {r.key: r for r in rows["What is the capital of France?"]}
    italy = {r.key: r for r in rows["What is the capital of Italy?"]}
    chinese = {r.key: r for r in rows["请介绍光合作用的过程和阶段"]}
    assert france["exact_match"].score == 1.0 and italy["exact_match"].score == 0.0
    assert france["string_distance"].score == 0.0 and italy["string_distance"].score == 1.0
    assert france["embedding_distance"].score == 0.0 and italy["embedding_distance"].score > 0
    assert france["rouge1"].score == 1.0
    assert chinese["rouge1"].metadata["tokenizer"] == "multilingual"
    assert chinese["completeness"].score == 1.0
    assert chinese["completeness"].metadata["preprocess_step_result"]["input_elements"] == [
        "光合作用",
        "过程",
        "阶段",
    ]
    assert france["json_validity"].score == 0.0  # "Paris" is not JSON
    assert france["json_missing_key"].score is None
    assert "run.outputs has no key 'missing'" in france["json_missing_key"].error

    aggregate = results.aggregate
    assert aggregate["exact_match"].mean == 1 / 3
    assert aggregate["json_missing_key"].errors == 3 and aggregate["json_missing_key"].n == 0

    stored = client.read_experiment("text")
    stored_keys = {r.key for row in stored for r in row["evaluation_results"]["results"]}
    assert {"exact_match", "completeness", "rouge1", "embedding_distance"} <= stored_keys
    client.close()
