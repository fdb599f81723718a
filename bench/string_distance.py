"""String distance throughput: StringDistanceEvaluator.evaluate() on runs and examples.

    .venv/bin/python bench/string_distance.py [PAIRS]

Prints pairs per second for each distance through the public ``evaluate()`` (output picked
from ``run.outputs``, reference from ``example.outputs``, an ``EvaluationResult`` built per
pair), best of 3 passes over PAIRS distinct pairs of 10-60 character strings (default
100,000), and, for scale, rapidfuzz's own batch ``cpdist`` on the same strings.
"""

from __future__ import annotations

import random
import string
import sys
import time

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from assay.evaluators.text.string import StringDistanceEvaluator
from assay.schemas import Example, Run

DISTANCES = ("levenshtein", "damerau_levenshtein", "jaro_winkler", "indel", "hamming", "jaro")
ALPHABET = string.ascii_lowercase + "      "


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(10, 60)))


def best_rate(evaluator: StringDistanceEvaluator, runs: list[Run], examples: list[Example]) -> float:
    best = 0.0
    for _ in range(3):
        start = time.perf_counter()
        for run, example in zip(runs, examples):
            evaluator.evaluate(run, example)
        best = max(best, len(runs) / (time.perf_counter() - start))
    return best


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rng = random.Random(7)
    predictions = [random_text(rng) for _ in range(count)]
    references = [random_text(rng) for _ in range(count)]
    runs = [Run(outputs={"output": text}) for text in predictions]
    examples = [Example(outputs={"output": text}) for text in references]
    for distance in DISTANCES:
        rate = best_rate(StringDistanceEvaluator(distance), runs, examples)  # type: ignore[arg-type]
        print(f"StringDistanceEvaluator({distance!r}).evaluate: {rate:,.0f} pairs/s")
    start = time.perf_counter()
    process.cpdist(predictions, references, scorer=Levenshtein.normalized_distance, workers=-1)
    print(
        f"rapidfuzz cpdist levenshtein (batch, all cores): "
        f"{count / (time.perf_counter() - start):,.0f} pairs/s"
    )


if __name__ == "__main__":
    main()
