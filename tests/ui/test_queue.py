"""Annotation queues and agreement: which rows, in which order, progress read back from
the store after a restart, and Cohen's kappa checked against scikit-learn's."""

from __future__ import annotations

import html
import random
import re

import pytest
from fastapi.testclient import TestClient
from sklearn.metrics import cohen_kappa_score
from ui_testdata import BASELINE_FAILED, Scenario

from assay.stats import agreement as stats
from assay.store.read.database import ReadOnlyDatabase
from assay.ui import create_app
from assay.ui.annotate.agreement import agreements
from assay.ui.annotate.human import Label
from assay.ui.annotate.queue import QueueSpec, queue_runs
from assay.ui.errors import BadRequest

ORIGIN = "http://127.0.0.1:8765"


def labels_of(key: str, **by_annotator: list[object]) -> list[Label]:
    return [
        Label(
            run_id=f"run-{i}",
            key=key,
            annotator=name,
            score=None,
            value=value,
            comment=None,
            correction=None,
            created_at="",
        )
        for name, values in by_annotator.items()
        for i, value in enumerate(values)
        if value is not None
    ]


@pytest.mark.parametrize("seed", range(8))
def test_kappa_is_scikit_learns_on_the_rows_both_labelled(seed: int) -> None:
    rng = random.Random(seed)
    categories = ["a", "b", "c", "d"][: rng.randint(2, 4)]
    n = rng.randint(5, 200)
    first: list[object] = [rng.choice(categories) for _ in range(n)]
    second: list[object] = [x if rng.random() < 0.6 else rng.choice(categories) for x in first]
    second[0] = None  # Ben skipped row 0: it is not shared
    (ours,) = agreements(labels_of("tone", Ann=first, Ben=second), ["tone"])
    assert ours.kappa == pytest.approx(cohen_kappa_score(first[1:], second[1:]), abs=1e-12)
    assert ours.ci_low is not None and ours.ci_high is not None
    assert -1 <= ours.ci_low <= ours.kappa <= ours.ci_high <= 1
    assert ours.n == n - 1 and (ours.first, ours.second) == ("Ann", "Ben")


def test_the_queue_and_judge_agreement_share_one_kappa() -> None:
    """The UI reads the statistics of ``assay.stats.agreement`` (no copy of its own)."""
    first, second = ["y"] * 40 + ["n"] * 30 + ["y"] * 20, ["y"] * 40 + ["n"] * 30 + ["n"] * 20
    rows = stats.LabelledRows({"Ann": first, "Ben": second})
    expected = stats.estimates(rows, {"kappa": stats.cohen_kappa(rows.pair("Ann", "Ben"))})["kappa"]
    (ours,) = agreements(labels_of("ok", Ann=list(first), Ben=list(second)), ["ok"])
    assert expected.interval is not None
    assert (ours.kappa, ours.ci_low, ours.ci_high) == (
        expected.value,
        expected.interval.low,
        expected.interval.high,
    )


def test_kappa_when_both_always_say_the_same_thing_is_undefined() -> None:
    (ours,) = agreements(labels_of("k", Ann=["x"] * 5, Ben=["x"] * 5), ["k"])
    assert ours.kappa is None and ours.observed == 1.0


def queue_ids(scenario: Scenario, **spec: object) -> list[str]:
    db = ReadOnlyDatabase(scenario.store)
    try:
        return queue_runs(db, QueueSpec((str(scenario.baseline.id),), **spec))  # type: ignore[arg-type]
    finally:
        db.close()


def test_queue_rules(scenario: Scenario) -> None:
    rows = {str(r.run.id): i for i, r in enumerate(scenario.store.load_rows(scenario.baseline))}
    every = queue_ids(scenario)
    assert [rows[i] for i in every] == list(range(12))
    sample = queue_ids(scenario, rule="random", n=5, seed=7)
    assert sample == queue_ids(scenario, rule="random", n=5, seed=7)  # the same queue for everyone
    assert len(set(sample)) == 5 and sample != queue_ids(scenario, rule="random", n=5, seed=8)
    assert sorted(rows[i] for i in queue_ids(scenario, rule="failed")) == sorted(BASELINE_FAILED)
    # odd rows score correct 0 and judge 1: the evaluators disagree there (row 9's target failed too)
    assert [rows[i] for i in queue_ids(scenario, rule="disagree")] == [1, 3, 5, 7, 9, 11]
    # quality 0.5 on odd rows: the judge least sure there, first
    assert [rows[i] for i in queue_ids(scenario, rule="unsure")][:6] == [1, 3, 5, 7, 9, 11]
    assert len(queue_ids(scenario, rule="all", n=3)) == 3


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"rule": "nearest"}, "unknown queue rule 'nearest'; accepted: all, random"),
        ({"rule": "random"}, "the 'random' rule needs 'n'"),
        ({"n": 0}, "parameter 'n' must be between 1 and"),
    ],
)
def test_a_bad_queue_is_named(scenario: Scenario, spec: dict[str, object], message: str) -> None:
    with pytest.raises(BadRequest, match=re.escape(message)):
        QueueSpec(("x",), **spec)  # type: ignore[arg-type]


def label_in_queue(client: TestClient, url: str, choice: str | None) -> str:
    """Label (or skip, with None) the queue's current row; the address it moves on to."""
    page = client.get(url)
    assert page.status_code == 200, page.text
    action = re.search(
        r'<form class="panel annotate" id="annotate" method="post" action="([^"]+)"', page.text
    )
    fields = dict(re.findall(r'<input type="hidden" name="(csrf|next)" value="([^"]*)"', page.text))
    assert action is not None
    body = {"annotator": re.search(r'name="annotator" id="annotator" value="([^"]*)"', page.text).group(1)}  # type: ignore[union-attr]
    body.update({k: html.unescape(v) for k, v in fields.items()})
    body.update({"key.human": choice} if choice else {"skip": "1"})
    saved = client.post(action.group(1), data=body, headers={"origin": ORIGIN}, follow_redirects=False)
    assert saved.status_code == 303, saved.text
    return str(saved.headers["location"])


def test_progress_and_position_survive_a_restart(scenario: Scenario) -> None:
    url = "/queue?e=baseline&annotator=Ann"
    with TestClient(create_app(scenario.store), base_url=ORIGIN) as client:
        label_in_queue(client, url, "up")
        label_in_queue(client, url, "down")
        label_in_queue(client, url, None)  # skipped: done for this queue, not a label
        page = client.get(url).text
        assert "3 of 12 labelled" in page and "row 4 of 12" in page
    with TestClient(create_app(scenario.store), base_url=ORIGIN) as restarted:  # a new process' keys
        page = restarted.get(url).text
        assert "3 of 12 labelled" in page and "row 4 of 12" in page
        other = restarted.get("/queue?e=baseline&annotator=Ben").text
        assert "0 of 12 labelled" in other and "row 1 of 12" in other  # progress is per annotator
    skipped = [f for f in scenario.store.list_feedback(keys=["skipped"])]
    assert len(skipped) == 1 and skipped[0].feedback_source["metadata"]["annotator"] == "Ann"  # type: ignore[index]


def test_a_finished_queue_says_so_and_agreement_is_scikit_learns(scenario: Scenario) -> None:
    ann = ["up", "up", "down", "up", "down", "down", "up", "up", "down", "up", "up", "down"]
    ben = ["up", "down", "down", "up", "down", "up", "up", "up", "down", "down", "up", "down"]
    with TestClient(create_app(scenario.store), base_url=ORIGIN) as client:
        for name, choices in (("Ann", ann), ("Ben", ben)):
            url = f"/queue?e=baseline&annotator={name}"
            for choice in choices:
                url = label_in_queue(client, url, choice)
        page = client.get("/queue?e=baseline&annotator=Ben").text
    assert 'id="queue-done"' in page and "12 of 12 labelled" in page
    kappa = re.search(r'<td class="num kappa">([^<]+)</td>', page)
    assert kappa is not None
    assert float(kappa.group(1)) == pytest.approx(cohen_kappa_score(ann, ben), abs=5e-4)
