"""``@traceable`` records child runs under the target's run, sync and async."""

from __future__ import annotations

import asyncio

import pytest

from assay import Client, traceable
from assay.tracing import get_current_run


@traceable(run_type="retriever")
def retrieve(query: str) -> list[str]:
    return [f"doc about {query}"]


@traceable(name="generate", run_type="llm")
def answer(query: str, docs: list[str]) -> str:
    return f"{query}: {docs[0]}"


@traceable
def pipeline(inputs: dict) -> dict:
    docs = retrieve(inputs["q"])
    return {"answer": answer(inputs["q"], docs)}


@traceable(run_type="tool")
async def lookup(key: str) -> str:
    await asyncio.sleep(0)
    if key == "bad":
        raise KeyError(key)
    return key.upper()


async def agent(inputs: dict) -> dict:
    values = await asyncio.gather(lookup("a"), lookup("b"))
    try:
        await lookup("bad")
    except KeyError:
        pass
    return {"values": values}


def test_sync_child_runs_nest(client: Client) -> None:
    [row] = list(client.evaluate(pipeline, data=[{"q": "cats"}]))
    [traced] = row["run"].child_runs  # the decorated target itself
    assert traced.name == "pipeline" and traced.outputs == {"answer": "cats: doc about cats"}
    assert [(c.name, c.run_type) for c in traced.child_runs] == [
        ("retrieve", "retriever"),
        ("generate", "llm"),
    ]
    assert traced.child_runs[0].inputs == {"query": "cats"}
    assert traced.child_runs[0].outputs == {"output": ["doc about cats"]}
    assert traced.child_runs[1].parent_run_id == traced.id
    assert traced.child_runs[1].trace_id == row["run"].id
    assert all(c.end_time >= c.start_time for c in traced.child_runs)


def test_async_children_and_errors_are_recorded_and_stored(client: Client) -> None:
    results = client.evaluate(agent, data=[{"q": 1}], experiment="agent")
    stored = list(client.read_experiment("agent"))[0]["run"]
    for run in (list(results)[0]["run"], stored):
        assert [(c.name, c.outputs, c.error) for c in run.child_runs] == [
            ("lookup", {"output": "A"}, None),
            ("lookup", {"output": "B"}, None),
            ("lookup", None, "KeyError: 'bad'"),
        ]


def test_traceable_outside_an_experiment_just_runs() -> None:
    assert get_current_run() is None
    assert pipeline({"q": "x"}) == {"answer": "x: doc about x"}
    with pytest.raises(KeyError):
        asyncio.run(lookup("bad"))
