"""The pytest plugin's writer: one dataset per test file, one experiment per file and session.

Several pytest-xdist workers write one store: every creation tolerates another process
having created the same thing first, and each test's row is one transaction.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from assay.errors import AlreadyExistsError
from assay.schemas import Dataset, EvaluationResult, Example, Run, utcnow
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow
from assay.testing._test_log import TestRecord

_NAMESPACE = uuid.UUID("0c6c1d64-51a3-4b8e-8f1e-6a4b8e2a9d11")


@dataclass(frozen=True)
class Suite:
    """The tests of one file (or one ``test_suite_name``): a dataset, and this session's experiment."""

    dataset: str
    experiment: str
    size: int
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    position: int
    passed: bool
    failure: str | None


class Recorder:
    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self._datasets: dict[str, Dataset] = {}
        self._experiments: dict[str, ExperimentRecord] = {}

    def write(
        self,
        suite: Suite,
        record: TestRecord,
        outcome: Outcome,
        params: dict[str, Any],
        options: dict[str, Any] | None = None,
    ) -> None:
        """One test's row; ``options`` are its mark's (``output_keys``, ``metadata``)."""
        dataset = self._dataset(suite.dataset)
        experiment = self._experiment(suite, dataset)
        example = self._example(dataset, record, params, options or {})
        results = [
            *record.feedback,
            EvaluationResult(key="pass", score=outcome.passed, comment=outcome.failure),
        ]
        run = Run(
            name=record.nodeid.rsplit("::", 1)[-1],
            inputs=example.inputs,
            outputs=record.outputs,
            start_time=record.started,
            end_time=utcnow(),
            reference_example_id=example.id,
        )
        row = ExperimentRow(
            run=run, example=example, repetition=0, position=outcome.position, results=results
        )
        self.store.write_rows(experiment.id, [row])

    def _dataset(self, name: str) -> Dataset:
        if name not in self._datasets:
            dataset = self.store.get_dataset(name=name)
            if dataset is None:
                try:
                    dataset = self.store.create_dataset(
                        name, description="recorded by the assay pytest plugin"
                    )
                except AlreadyExistsError:  # another worker was first
                    dataset = self.store.get_dataset(name=name)
            assert dataset is not None
            self._datasets[name] = dataset
        return self._datasets[name]

    def _experiment(self, suite: Suite, dataset: Dataset) -> ExperimentRecord:
        if suite.experiment not in self._experiments:
            record = self.store.get_experiment(name=suite.experiment)
            if record is None:
                record = ExperimentRecord(
                    name=suite.experiment,
                    dataset_id=dataset.id,
                    num_examples=suite.size,
                    # the user's keys first, so the plugin's own cannot be overwritten
                    metadata={**suite.metadata, "source": "pytest", "pytest_run": self.run_id},
                    config={"target": "pytest", "evaluators": ["pass"]},
                )
                try:
                    self.store.create_experiment(record)
                except AlreadyExistsError:
                    record = self.store.get_experiment(name=suite.experiment)
            assert record is not None
            self._experiments[suite.experiment] = record
        return self._experiments[suite.experiment]

    def _example(
        self, dataset: Dataset, record: TestRecord, params: dict[str, Any], options: dict[str, Any]
    ) -> Example:
        """The test's example: its id from the test's node id, content from what it logged
        (or its parameters, ``output_keys`` among them being the reference outputs)."""
        example_id = uuid.uuid5(_NAMESPACE, f"{dataset.name}:{record.nodeid}")
        parameters = _plain(params)
        from_params = {key: parameters.pop(key, None) for key in options.get("output_keys") or ()}
        inputs = record.inputs if record.logged_inputs else (parameters or {"test": record.nodeid})
        outputs = record.reference_outputs or from_params or None
        metadata = dict(options.get("metadata") or {})
        stored = self.store.get_example(example_id)
        if stored is None:
            example = Example(
                id=example_id, dataset_id=dataset.id, inputs=inputs, outputs=outputs, metadata=metadata
            )
            try:
                self.store.add_examples(dataset.id, [example])
            except AlreadyExistsError:
                pass
            return example
        if stored.inputs != inputs or stored.outputs != outputs or stored.metadata != metadata:
            stored = stored.model_copy(update={"inputs": inputs, "outputs": outputs, "metadata": metadata})
            self.store.update_example(stored)
        return stored

    def finish(self, status: str) -> int:
        """Mark this session's experiments finished (the controller calls it once)."""
        finished = 0
        for record in self.store.list_experiments():
            if record.metadata.get("pytest_run") == self.run_id and record.status == "running":
                self.store.finish_experiment(record.id, status)
                finished += 1
        return finished


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """Parametrize values as JSON-safe data (repr for anything else)."""
    plain = {}
    for name, value in params.items():
        try:
            json.dumps(value)
            plain[name] = value
        except (TypeError, ValueError):
            plain[name] = repr(value)
    return plain
