"""Building the metric columns when a run completes needs no numpy (importing it costs
a short run ~0.3 s of CPU); a comparison reads them with it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

_RUN = textwrap.dedent(
    """
    import json, sys
    import assay
    from assay.store import open_store
    from assay.store import _columns as columns

    store = open_store(sys.argv[1])
    client = assay.Client(store=store)
    dataset = client.create_dataset("d")
    client.create_examples(
        dataset_id=dataset.id, examples=[{"inputs": {"x": i}, "outputs": {"y": i % 3}} for i in range(50)]
    )

    def exact(outputs, reference_outputs):
        return outputs["y"] == reference_outputs["y"]

    results = client.evaluate(lambda x: {"y": x % 2}, data="d", evaluators=[exact], progress=False)
    experiment = client.read_experiment(results.experiment_name)
    with store.snapshot() as conn:
        built = columns.load(conn, str(experiment.id))
    print(json.dumps({
        "numpy": "numpy" in sys.modules,
        "built": built is not None and built.metrics["exact"].results == 50,
        "one_per_row": built is not None and built.metrics["exact"].one_per_row,
    }))
    """
)


def test_a_completed_run_builds_its_columns_without_importing_numpy(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _RUN, str(tmp_path / "store.db")], check=True, capture_output=True, text=True
    ).stdout
    facts = json.loads(out.strip().splitlines()[-1])
    assert facts == {"numpy": False, "built": True, "one_per_row": True}
