"""A script written for the LangSmith SDK, offline. The test runs it with ``langsmith``
swapped for ``assay`` and compares what it prints with what LangSmith printed."""

# ruff: noqa: I001, S307  (a user script, kept as a LangSmith user writes it)
import asyncio
import uuid

from langsmith import Client, aevaluate, evaluate, traceable
from langsmith.run_helpers import get_current_run_tree, trace, tracing_context
from langsmith.run_trees import RunTree
from langsmith.schemas import Example

client = Client(api_key="x", api_url="http://127.0.0.1:9")

QUESTIONS = [("2+2", "4"), ("3*3", "9"), ("10-7", "3"), ("boom", "?")]
examples = [
    Example(
        id=uuid.UUID(int=i + 1), inputs={"question": q}, outputs={"answer": a}, dataset_id=uuid.UUID(int=99)
    )
    for i, (q, a) in enumerate(QUESTIONS)
]


@traceable(run_type="tool")
def calculator(expression: str) -> str:
    if expression == "boom":
        raise ValueError("cannot compute boom")
    return str(eval(expression))


@traceable("chain")
def answer(inputs: dict) -> dict:
    with trace("lookup", inputs={"q": inputs["question"]}) as span:
        span.end(outputs={"found": True})
    return {"answer": calculator(inputs["question"])}


def correct(outputs: dict, reference_outputs: dict) -> bool:
    return outputs.get("answer") == reference_outputs["answer"]


def length(run, example):
    return {"key": "length", "score": len((run.outputs or {}).get("answer", ""))}


def several(outputs: dict) -> dict:
    return {"results": [{"key": "has_answer", "score": "answer" in outputs}, {"key": "label", "value": "ok"}]}


def broken(outputs: dict) -> bool:
    raise RuntimeError("evaluator bug")


def accuracy(outputs: list, reference_outputs: list) -> dict:
    hits = sum(o.get("answer") == r["answer"] for o, r in zip(outputs, reference_outputs))
    return {"key": "accuracy", "score": hits / len(outputs)}


results = evaluate(
    answer,
    data=examples,
    evaluators=[correct, length, several, broken],
    summary_evaluators=[accuracy],
    num_repetitions=2,
    client=client,
    upload_results=False,
    blocking=False,
    max_concurrency=2,
)
results.wait()
rows = sorted(results, key=lambda r: (str(r["example"].id), r["run"].error or ""))
print("rows", len(rows))
for row in rows[::2]:
    scores = {r.key: (r.score, r.value) for r in row["evaluation_results"]["results"]}
    print(
        row["example"].inputs["question"],
        (row["run"].outputs or {}).get("answer"),
        "cannot compute boom" in (row["run"].error or ""),
        sorted(scores.items()) if row["run"].error is None else "target failed",
    )
print(
    sorted(
        r.key
        for row in rows
        for r in row["evaluation_results"]["results"]
        if r.key == "broken" and r.score is None
    )[:1],
    len(results.to_pandas()),
)
df = results.to_pandas(end=6)
print(sorted(c for c in df.columns if not c.startswith("outputs.")), "outputs.answer" in df.columns)
print(len(results.to_pandas(start=1, end=3)), df["execution_time"].notna().all())
print(sorted((r.key, r.score) for r in results._summary_results["results"]))


async def main() -> None:
    async def atarget(inputs: dict) -> dict:
        await asyncio.sleep(0)
        return {"answer": inputs["question"]}

    results = await aevaluate(
        atarget, data=examples, evaluators=[correct], client=client, upload_results=False
    )
    seen = []
    async for row in results:
        seen.append(row["evaluation_results"]["results"][0].score)
    print("async", sorted(seen))


asyncio.run(main())

root = RunTree(name="pipeline", run_type="chain", inputs={"q": "hi"})
child = root.create_child(name="llm", run_type="llm", inputs={"prompt": "hi"})
child.end(outputs={"text": "hello"})
root.end(outputs={"answer": "hello"})
root.post()
print(root.name, [c.name for c in root.child_runs], child.parent_run_id == root.id, child.trace_id == root.id)
print(child.dotted_order.startswith(root.dotted_order + "."), root.outputs, child.outputs)


@traceable
def inner(x: int) -> int:
    run = get_current_run_tree()
    return x + (1 if run is not None else 0)


with tracing_context(enabled=True):
    with trace("outer", inputs={"x": 1}) as outer:
        print("inner", inner(1), len(outer.child_runs), outer.child_runs[0].name, outer.child_runs[0].outputs)


@traceable
def stream(n: int):
    yield from range(n)


captured = []
with tracing_context(enabled=True):
    print(list(stream(3, langsmith_extra={"on_end": captured.append})), captured[0].outputs)
