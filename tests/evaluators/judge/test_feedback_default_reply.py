"""``LLMFeedbackEvaluator`` asks for one verdict per criterion in its schema, so the loopback
server's default reply (a valid instance of the request's schema) judges every criterion,
whatever the criteria are called, in one call."""

from __future__ import annotations

import assay
from assay.evaluators import LLMFeedbackEvaluator
from assay.schemas import Example, Run
from assay.testing import FakeOpenAIServer

CRITERIA = {
    "helpful": "Is it helpful?",
    "title": "Does it have a title?",  # names that are also JSON-schema words
    "default": "Is it the default answer?",
    "plain words": "Is it in plain words?",
}


def test_the_default_reply_judges_every_criterion_in_one_call() -> None:
    with FakeOpenAIServer() as server:
        judge = LLMFeedbackEvaluator(CRITERIA, model=server.chat_model())
        results = assay.evaluate(
            lambda inputs: {"output": "Paris."},
            data=[{"inputs": {"q": "Capital of France?"}}],
            evaluators=[judge],
            client=assay.Client("sqlite://"),  # its judge cache too: empty, this test's own
        )
        (row,) = list(results)
        assert [(r.key, r.score, r.error) for r in row["evaluation_results"]["results"]] == [
            (name, 1, None) for name in CRITERIA
        ]
        assert len(server.chat_requests) == 1
        schema = server.chat_requests[0].schema
        assert schema is not None
        assert schema["$defs"]["CriterionVerdicts"]["required"] == list(CRITERIA)


def test_a_reply_keyed_by_criterion_is_read() -> None:
    reply = {
        "verdicts": {
            "depth": {"reasoning": "shallow", "value": "N"},
            "conciseness": {"reasoning": "ok", "value": "y"},
        }
    }
    with FakeOpenAIServer([reply]) as server:
        judge = LLMFeedbackEvaluator(["conciseness", "depth"], model=server.chat_model())
        results = judge.evaluate_run(Run(outputs={"output": "x"}), Example(inputs={"q": "y"}))
    assert [(r.key, r.score, r.comment) for r in results.results] == [
        ("conciseness", 1, "ok"),
        ("depth", 0, "shallow"),
    ]
