"""Run by test_crash in a child process that the test kills with SIGKILL at a random point.

Every row's last evaluator appends "<x> <time>" to a side file with one unbuffered
``write``: what the kernel has is what the process reported finished, SIGKILL or not.
"""

import os
import sys
import time

from assay import Client, evaluate
from assay.schemas import Example

ROWS = 12_000
CONCURRENCY = 4


def target(inputs: dict) -> dict:
    return {"y": 2 * inputs["x"]}


def make_reporter(path: str):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def finished(inputs: dict, outputs: dict) -> bool:
        os.write(fd, f"{inputs['x']} {time.time():.6f}\n".encode())
        return outputs["y"] == 2 * inputs["x"]

    return finished


if __name__ == "__main__":
    db, side = sys.argv[1], sys.argv[2]
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else ROWS
    client = Client(db)
    dataset = client.create_dataset("crash")
    client.store.add_examples(dataset.id, (Example(inputs={"x": i}) for i in range(rows)))
    evaluate(
        target,
        data="crash",
        evaluators=[make_reporter(side)],
        experiment="crash",
        max_concurrency=CONCURRENCY,
        client=client,
        progress=False,
    )
