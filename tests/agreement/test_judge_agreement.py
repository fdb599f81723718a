"""``judge_agreement`` and ``assay agreement`` on real experiments: a judge model on the
loopback server, human labels stored as feedback (source ``human``) or as references."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

import assay
from assay.cli import main
from assay.evaluators import CriteriaEvaluator
from assay.testing import FakeOpenAIServer, RecordedRequest, Reply

ANSWERS = [f"answer number {i}" for i in range(60)]
HUMAN = {text: i % 3 != 0 for i, text in enumerate(ANSWERS)}  # people's verdict per answer


def biased_judge(request: RecordedRequest) -> Any:
    """Agrees with people except on every fifth answer; 'strict' prompts agree more."""
    index = next(i for i, text in enumerate(ANSWERS) if f"[Submission]: {text}\n" in request.text)
    if index == 59:
        return Reply.server_error(400)  # an error outcome, not a label
    agrees = index % 5 != 0 or ("STRICT" in request.text and index % 10 != 0)
    verdict = HUMAN[ANSWERS[index]] if agrees else not HUMAN[ANSWERS[index]]
    return {"reasoning": "r", "value": "Y" if verdict else "N"}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(handler=biased_judge) as running:
        yield running


@pytest.fixture
def labelled(server: FakeOpenAIServer, tmp_path: Path) -> assay.Client:
    """An experiment judged by two judge prompts, with people's labels on 50 of its 60 rows."""
    client = assay.Client(database_url=f"sqlite:///{tmp_path / 'assay.db'}")
    strict = CriteriaEvaluator(
        {"helpful": "Is it helpful?"},
        model=server.chat_model(),
        name="helpful_strict",
        prompt="STRICT\n[Input]: {input}\n[Submission]: {output}\n{criteria}",
    )
    results = assay.evaluate(
        lambda inputs: {"answer": inputs["q"]},
        data=[{"inputs": {"q": text}} for text in ANSWERS],
        evaluators=[
            CriteriaEvaluator({"helpful": "Is it helpful?"}, model=server.chat_model()),
            strict,
        ],
        client=client,
        experiment="judged",
    )
    for row in results:
        answer = row["run"].outputs["answer"]
        if ANSWERS.index(answer) < 50:
            client.create_feedback(
                row["run"].id, "helpful_human", score=HUMAN[answer], feedback_source_type="human"
            )
    return client


def pairs(client: assay.Client, judge_key: str) -> tuple[list[int], list[int]]:
    """(judge, human) by hand from the stored records, for the reference computation."""
    record = client.store.get_experiment(name="judged")
    assert record is not None
    judge, human = {}, {}
    for row in client.store.load_rows(record):
        for result in row.results:
            if result.key == judge_key and result.error is None:
                judge[row.run.id] = int(result.score)
    for item in client.list_feedback(feedback_key=["helpful_human"], feedback_source_type=["human"]):
        human[item.run_id] = int(item.score)
    shared = sorted(judge.keys() & human.keys())
    return [judge[k] for k in shared], [human[k] for k in shared]


def test_a_judge_against_human_feedback(labelled: assay.Client) -> None:
    report = assay.judge_agreement("judged", "helpful", "helpful_human", client=labelled)
    judge, human = pairs(labelled, "helpful")
    assert report.scale == "nominal" and report.n == len(judge) == 50
    assert report.kappa is not None and report.accuracy is not None
    assert report.kappa.value == pytest.approx(cohen_kappa_score(judge, human))
    assert report.accuracy.value == pytest.approx(40 / 50)  # every fifth answer disagrees
    assert (
        report.kappa.interval is not None
        and report.kappa.interval.low < report.kappa.value < report.kappa.interval.high
    )
    assert report.confusion is not None and report.confusion.labels == [0, 1]
    assert sum(map(sum, report.confusion.counts)) == 50
    assert report.confusion.counts[0][1] + report.confusion.counts[1][0] == 10
    # the rows that disagree, each a link to its page in the UI, and nothing else
    assert len(report.disagreements) == 10
    record = labelled.store.get_experiment(name="judged")
    assert record is not None
    for row in report.disagreements:
        run = labelled.read_run(row.run_id)
        assert ANSWERS.index(run.outputs["answer"]) % 5 == 0
        assert row.link == f"/experiments/{record.id}/rows/{row.run_id}"
    assert report.judge_only == 9 and report.human_only == 0 and report.judge_errors == 1


def test_feedback_not_from_people_is_not_a_human_label(labelled: assay.Client) -> None:
    record = labelled.store.get_experiment(name="judged")
    assert record is not None
    rows = labelled.store.load_rows(record)
    flipped = next(row for row in rows if ANSWERS.index(row.run.outputs["answer"]) == 1)
    labelled.create_feedback(flipped.run.id, "helpful_human", score=0, feedback_source_type="api")
    people = assay.judge_agreement("judged", "helpful", "helpful_human", client=labelled)
    anyone = assay.judge_agreement("judged", "helpful", "helpful_human", client=labelled, human_source=None)
    assert people.accuracy is not None and anyone.accuracy is not None
    assert people.accuracy.value == pytest.approx(0.8)
    assert anyone.accuracy.value == pytest.approx(39 / 50)  # the later api label won there


def test_two_judges_with_a_paired_interval(labelled: assay.Client) -> None:
    report = assay.judge_agreement(
        "judged", "helpful", "helpful_human", against="helpful_strict", client=labelled
    )
    comparison = report.comparison
    assert comparison is not None and comparison.n == 50
    loose, human = pairs(labelled, "helpful")
    strict, _ = pairs(labelled, "helpful_strict")
    assert comparison.this.value == pytest.approx(cohen_kappa_score(loose, human))
    assert comparison.other.value == pytest.approx(cohen_kappa_score(strict, human))
    assert comparison.difference.value == pytest.approx(comparison.other.value - comparison.this.value)
    assert comparison.difference.interval is not None and comparison.difference.interval.low > 0
    assert "helpful_strict" in str(report) and "difference +" in str(report)


def test_a_judge_as_the_target_of_an_experiment_over_a_labelled_dataset(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    client = assay.Client(database_url=f"sqlite:///{tmp_path / 'calibration.db'}")
    dataset = client.create_dataset("labelled answers")
    client.create_examples(
        dataset_id=dataset.id,
        inputs=[{"input": "q", "output": text} for text in ANSWERS[:40]],
        outputs=[{"label": int(HUMAN[text])} for text in ANSWERS[:40]],
    )
    judges = {
        "loose": CriteriaEvaluator({"helpful": "Is it helpful?"}, model=server.chat_model()),
        "strict": CriteriaEvaluator(
            {"helpful": "Is it helpful?"},
            model=server.chat_model(),
            prompt="STRICT\n[Input]: {input}\n[Submission]: {output}\n{criteria}",
        ),
    }
    for name, judge in judges.items():
        assay.evaluate(judge.as_target(), data="labelled answers", client=client, experiment=f"judge-{name}")
    calls = len(server.chat_requests)
    report = assay.judge_agreement(
        "judge-loose",
        "outputs.score",
        "reference.label",
        against_experiment="judge-strict",
        client=client,
    )
    assert report.n == 40 and report.accuracy is not None and report.accuracy.value == pytest.approx(32 / 40)
    assert report.comparison is not None and report.comparison.n == 40
    assert report.comparison.difference.value is not None and report.comparison.difference.value > 0
    # a re-run of the calibration is answered from the judge cache
    assay.evaluate(judges["loose"].as_target(), data="labelled answers", client=client, experiment="again")
    assert len(server.chat_requests) == calls


def test_ordinal_and_continuous_labels(tmp_path: Path) -> None:
    client = assay.Client(database_url=f"sqlite:///{tmp_path / 'scores.db'}")
    rng = random.Random(3)
    truth = [rng.randint(1, 5) for _ in range(150)]
    noisy = {i: min(5, max(1, t + rng.choice([-1, 0, 0, 1]))) for i, t in enumerate(truth)}
    results = assay.evaluate(
        lambda inputs: {"i": inputs["i"], "p": noisy[inputs["i"]] / 5 + rng.random() / 10},
        data=[{"inputs": {"i": i}, "outputs": {"label": t}} for i, t in enumerate(truth)],
        evaluators=[lambda outputs: {"key": "rubric", "score": noisy[outputs["i"]]}],
        client=client,
        experiment="rubric",
    )
    for row in results:
        client.create_feedback(
            row["run"].id, "rubric_human", score=truth[row["run"].outputs["i"]], feedback_source_type="human"
        )
    ordinal = assay.judge_agreement("rubric", "rubric", "rubric_human", client=client)
    judge = [noisy[i] for i in range(150)]
    assert ordinal.scale == "ordinal" and ordinal.kappa_weights == "quadratic"
    assert ordinal.kappa is not None and ordinal.spearman is not None
    assert ordinal.kappa.value == pytest.approx(
        cohen_kappa_score(judge, truth, weights="quadratic", labels=[1, 2, 3, 4, 5])
    )
    assert ordinal.spearman.value == pytest.approx(spearmanr(judge, truth).statistic)
    assert ordinal.disagreements[0].distance == 1.0
    continuous = assay.judge_agreement("rubric", "outputs.p", "reference.label", client=client)
    assert continuous.scale == "continuous" and continuous.kappa is None and continuous.confusion is None
    stored = [row["run"].outputs for row in results]
    expected = spearmanr([o["p"] for o in stored], [truth[o["i"]] for o in stored]).statistic
    assert continuous.spearman is not None and continuous.spearman.value == pytest.approx(expected)


def test_labels_of_different_kinds_are_a_clear_error(labelled: assay.Client) -> None:
    record = labelled.store.get_experiment(name="judged")
    assert record is not None
    first = labelled.store.load_rows(record)[0]
    labelled.create_feedback(first.run.id, "text_human", value="good", feedback_source_type="human")
    with pytest.raises(ValueError, match="not of one kind"):
        assay.judge_agreement("judged", "helpful", "text_human", client=labelled)


def test_the_command_line(labelled: assay.Client, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(labelled.store.url)
    code = main(["--db", db, "agreement", "judged", "--judge", "helpful", "--human", "helpful_human"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Cohen's kappa" in out and "n=50" in out and "/rows/" in out and "confusion" in out
    code = main(
        [
            "--db",
            db,
            "agreement",
            "judged",
            "--judge",
            "helpful",
            "--human",
            "helpful_human",
            "--against",
            "helpful_strict",
            "--json",
        ]
    )
    decoded = json.loads(capsys.readouterr().out)
    assert code == 0 and decoded["n"] == 50 and decoded["comparison"]["difference"]["n"] == 50
    assert decoded["kappa"]["interval"]["method"] == "percentile bootstrap"
    code = main(["--db", db, "agreement", "judged", "--judge", "helpful", "--human", "helpfull"])
    err = capsys.readouterr().err
    assert code == 2 and "helpful_human (human)" in err and "no row of judged" in err


def test_the_same_figures_on_sqlite_and_postgresql(any_client: assay.Client) -> None:
    """The fast path reads stored scores and the feedback table: both backends, one answer;
    a later label of the same run wins, and feedback of other experiments is ignored."""
    rng = random.Random(9)
    truth = [rng.randint(1, 4) for _ in range(40)]
    judged = [min(4, max(1, t + rng.choice([-1, 0, 1]))) for t in truth]
    results = assay.evaluate(
        lambda inputs: inputs,
        data=[{"inputs": {"i": i}} for i in range(40)],
        evaluators=[lambda inputs: {"key": "rubric", "score": judged[inputs["i"]]}],
        client=any_client,
        experiment="both-stores",
    )
    other = assay.evaluate(
        lambda inputs: inputs, data=[{"inputs": {"i": 0}}], client=any_client, experiment="other"
    )
    rows = list(results)
    for row in rows:
        i = row["run"].inputs["i"]
        any_client.create_feedback(row["run"].id, "rubric_human", score=5, feedback_source_type="human")
        any_client.create_feedback(
            row["run"].id, "rubric_human", score=truth[i], feedback_source_type="human"
        )
    any_client.create_feedback(
        list(other)[0]["run"].id, "rubric_human", score=1, feedback_source_type="human"
    )
    report = assay.judge_agreement("both-stores", "rubric", "rubric_human", client=any_client)
    assert report.n == 40 and report.kappa is not None
    assert report.kappa.value == pytest.approx(
        cohen_kappa_score(judged, truth, weights="quadratic", labels=[1, 2, 3, 4])
    )
    assert {d.run_id for d in report.disagreements} <= {str(row["run"].id) for row in rows}
