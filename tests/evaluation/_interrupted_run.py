"""Run by test_resume in a child process that the test kills with SIGKILL mid-run."""

import sys
import time

from assay import Client, evaluate

DATA = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(120)]


def target(inputs: dict) -> dict:
    time.sleep(0.01)
    return {"y": 2 * inputs["x"] if inputs["x"] % 7 else -1}


def correct(outputs: dict, reference_outputs: dict) -> bool:
    return outputs["y"] == reference_outputs["y"]


if __name__ == "__main__":
    evaluate(
        target,
        data=DATA,
        evaluators=[correct],
        experiment="interrupted",
        num_repetitions=2,
        max_concurrency=4,
        client=Client(sys.argv[1]),
        progress=False,
    )
