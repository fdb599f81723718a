"""What a judge asked its model and the raw reply, stored with each result (bounded, the
API key scrubbed) and shown on the row page, escaped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

import assay
from assay.evaluators import CriteriaEvaluator
from assay.llm.transcript import PROMPT_CHARS, REPLY_CHARS
from assay.store import open_store
from assay.testing import FakeOpenAIServer
from assay.ui import create_app

SECRET = "sk-judge-call-7731"
HOSTILE = "<script>alert(1)</script>"


def judged(server: FakeOpenAIServer, tmp_path: Path, questions: list[str]) -> tuple[Path, dict[str, Any]]:
    database = tmp_path / "assay.db"
    client = assay.Client(database_url=f"sqlite:///{database}")
    results = assay.evaluate(
        lambda inputs: {"answer": inputs["q"].upper()},
        data=[{"inputs": {"q": q}} for q in questions],
        evaluators=[CriteriaEvaluator("conciseness", model=server.chat_model(api_key=SECRET, cache=False))],
        client=client,
        experiment="judged",
        max_concurrency=1,
    )
    found = {row["example"].inputs["q"]: row["evaluation_results"]["results"][0] for row in results}
    client.close()
    return database, found


def test_the_prompt_and_raw_reply_are_stored_bounded_and_without_the_key(tmp_path: Path) -> None:
    long_question = "start " + "x" * 50_000 + " finish"
    with FakeOpenAIServer() as server:
        server.script(
            f'{{"reasoning": "short {HOSTILE}", "value": "Y"}}',  # first row
            f"I think the key {SECRET} says yes",  # second row: unusable, then repaired
            '{"reasoning": "after a repair", "value": "N"}',
            '{"reasoning": "' + "r" * 10_000 + '", "value": "Y"}',  # the long row
        )
        database, found = judged(server, tmp_path, ["what is 2+2", "echo the key", long_question])

    first = found["what is 2+2"].metadata["judge_call"]
    assert "WHAT IS 2+2" in first["prompt"] and "conciseness" in first["prompt"]
    assert first["reply"] == f'{{"reasoning": "short {HOSTILE}", "value": "Y"}}' and first["attempt"] == 1

    repaired = found["echo the key"]
    assert repaired.score == 0 and repaired.metadata["judge_call"]["attempt"] == 2
    assert "could not be used" in repaired.metadata["judge_call"]["prompt"]  # the repair request
    assert "I think the key *** says yes" in repaired.metadata["judge_call"]["prompt"]  # its echo, scrubbed

    long = found[long_question].metadata["judge_call"]
    assert long["prompt"].startswith("[user]") and long["prompt"].rstrip().endswith(long["prompt"][-20:])
    assert "characters cut" in long["prompt"] and "FINISH" in long["prompt"]
    assert len(long["prompt"]) < PROMPT_CHARS + 100 and len(long["reply"]) < REPLY_CHARS + 100
    assert SECRET.encode() not in database.read_bytes()


def test_a_reply_that_never_parses_keeps_its_raw_text_for_the_row_page(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.script(f"no json {HOSTILE}", f"still no json {HOSTILE}")
        database, found = judged(server, tmp_path, ["hard one"])
    failed = found["hard one"]
    assert failed.error is not None and "never gave a usable" in failed.error
    assert failed.metadata["judge_call"]["reply"] == f"still no json {HOSTILE}"

    store = open_store(f"sqlite:///{database}")
    try:
        experiment = next(x for x in store.list_experiments() if x.name == "judged")
        run = store.load_rows(experiment)[0].run.id
        with TestClient(create_app(store), base_url="http://127.0.0.1") as client:
            page = client.get(f"/experiments/{experiment.id}/rows/{run}").text
    finally:
        store.close()
    assert 'class="block prose judge-reply">still no json &lt;script&gt;alert(1)&lt;/script&gt;' in page
    assert "Prompt sent to the judge model (attempt 2, after a repair)" in page
    assert HOSTILE not in page and "HARD ONE" in page
