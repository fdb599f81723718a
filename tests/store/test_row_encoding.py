"""A row as the SQLite store writes it: its "failed" flag is the one rule the migration
that added the column applies to stored rows, whatever the mix of target errors, result
errors and scores (bool, int, float, missing), and every field reads back as given."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone

from assay import Client
from assay.schemas import EvaluationResult, Example, Run
from assay.store.records import ExperimentRecord, ExperimentRow

SCORES: list[object] = [None, True, False, 0, 1, 2, 0.5, 1.0, -0.0, 0.9999999999999999]
"""Each kind of score a result carries, on both sides of the "below 1" line."""

# What the migration computes for rows stored before the column existed.
MIGRATION_RULE = (
    "SELECT u.position, u.failed, (u.error IS NOT NULL OR EXISTS (SELECT 1 FROM results r "
    "WHERE r.run_id = u.id AND (r.error IS NOT NULL OR r.score < 1))) FROM runs u "
    "WHERE u.experiment_id = ? ORDER BY u.position"
)


def _result(key: str, score: object, errored: bool) -> EvaluationResult:
    if errored:
        return EvaluationResult(key=key, error="evaluator raised")
    return EvaluationResult(key=key, score=score, comment="a\x00b \ud800" if score is None else None)


def _rows(example: Example) -> list[ExperimentRow]:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    shapes = itertools.product([False, True], SCORES, [False, True], SCORES)
    rows = []
    for position, (run_error, first, second_errors, second) in enumerate(shapes):
        run = Run(
            inputs={"i": position},
            outputs=None if run_error else {"o": position, "text": "é\x00"},
            error="target raised" if run_error else None,
            start_time=start,
            end_time=start + timedelta(milliseconds=position),
        )
        results = [_result("first", first, False), _result("second", second, second_errors)]
        rows.append(
            ExperimentRow(run=run, example=example, repetition=position, position=position, results=results)
        )
    return rows


def test_the_stored_failed_flag_is_the_migrations_rule_for_every_kind_of_row(client: Client) -> None:
    dataset = client.create_dataset("encoding")
    client.create_examples(inputs=[{"i": 0}], dataset_name="encoding")
    example = next(iter(client.store.iter_examples(dataset.id)))
    record = ExperimentRecord(name="encoding", dataset_id=dataset.id, dataset_version=dataset.version)
    client.store.create_experiment(record)
    rows = _rows(example)
    client.store.write_rows(record.id, rows)

    flags = client.store.conn.execute(MIGRATION_RULE, (str(record.id),)).fetchall()  # type: ignore[attr-defined]
    assert len(flags) == len(rows) == 2 * len(SCORES) * 2 * len(SCORES)
    assert [(p, stored) for p, stored, _ in flags] == [(p, rule) for p, _, rule in flags]
    assert {stored for _, stored, _ in flags} == {0, 1}  # both sides exercised

    stored = {row.position: row for row in client.store.load_rows(record)}
    for row in rows:
        back = stored[row.position]
        assert back.run.outputs == row.run.outputs and back.run.error == row.run.error
        for given, read in zip(row.results, back.results, strict=True):
            assert (read.key, read.error, read.comment) == (
                given.key,
                given.error,
                _stored_text(given.comment),
            )
            assert read.score == given.score and type(read.score) is type(given.score)


def _stored_text(value: str | None) -> str | None:
    return None if value is None else value.encode("utf-8", "backslashreplace").decode("utf-8")
