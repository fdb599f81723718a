"""Tracing as LangSmith code writes it: ``@traceable("llm")``, ``langsmith_extra``,
``trace()``, ``tracing_context()``, ``RunTree``, ``get_current_run_tree()``, generators,
and the import paths ``assay.run_helpers`` / ``assay.run_trees``."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from assay import Client, evaluate
from assay.run_helpers import get_current_run_tree, trace, traceable, tracing_context
from assay.run_trees import RunTree


@traceable("llm")
def model(prompt: str, temperature: float = 0.0, **options: object) -> str:
    return prompt.upper()


def test_positional_run_type_and_recorded_inputs() -> None:
    with trace("root") as root:
        assert model("hi", top_p=1) == "HI"
    [run] = root.child_runs
    assert (run.name, run.run_type) == ("model", "llm")
    assert run.inputs == {"prompt": "hi", "temperature": 0.0, "top_p": 1}  # defaults, **kwargs flat
    assert run.outputs == {"output": "HI"} and run.parent_run_id == root.id


def test_langsmith_extra_sets_name_metadata_tags_id_and_on_end() -> None:
    ended: list[RunTree] = []
    run_id = uuid.uuid4()
    with trace("root") as root:
        model(
            "x",
            langsmith_extra={
                "name": "renamed",
                "metadata": {"m": 1},
                "tags": ["t"],
                "run_id": run_id,
                "on_end": ended.append,
            },
        )
    [run] = root.child_runs
    assert (run.name, run.id, run.metadata, run.tags) == ("renamed", run_id, {"m": 1}, ["t"])
    assert ended == [run] and run.end_time is not None
    with pytest.raises(TypeError, match="unknown keys \\['nmae'\\]"):
        model("x", langsmith_extra={"nmae": "typo"})


def test_parent_in_langsmith_extra_and_in_tracing_context() -> None:
    parent = RunTree(name="manual")
    model("a", langsmith_extra={"parent": parent})
    with tracing_context(parent=parent, tags=["ctx"], metadata={"env": "test"}):
        model("b")
    assert [c.inputs["prompt"] for c in parent.child_runs] == ["a", "b"]
    second = parent.child_runs[1]
    assert second.tags == ["ctx"] and second.metadata == {"env": "test"}
    assert second.trace_id == parent.id and second.dotted_order.startswith(parent.dotted_order + ".")


def test_tracing_disabled_records_nothing_but_runs_the_code() -> None:
    with trace("root") as root:
        with tracing_context(enabled=False):
            assert model("quiet") == "QUIET"
            assert get_current_run_tree() is root  # nothing new became current
    assert root.child_runs == []


def test_trace_records_errors_and_lets_them_propagate() -> None:
    with trace("root") as root:
        with pytest.raises(KeyError):
            with trace("failing", run_type="tool", inputs={"k": 1}):
                raise KeyError("k")
        with trace("handled", exceptions_to_handle=(StopIteration,)):
            try:
                with trace("inner-handled", exceptions_to_handle=(StopIteration,)):
                    raise StopIteration
            except StopIteration:
                pass
    failing, handled = root.child_runs
    assert failing.error == "KeyError: 'k'" and failing.run_type == "tool" and failing.end_time
    assert handled.error is None and handled.child_runs[0].error is None
    assert root.end_time is not None


async def test_async_trace_and_async_traceable() -> None:
    @traceable(run_type="retriever")
    async def fetch(key: str) -> dict:
        await asyncio.sleep(0)
        return {"doc": key}

    async with trace("root") as root:
        docs = await asyncio.gather(fetch("a"), fetch("b"))
    assert docs == [{"doc": "a"}, {"doc": "b"}]
    assert sorted(c.outputs["doc"] for c in root.child_runs) == ["a", "b"]


def test_run_tree_by_hand() -> None:
    root = RunTree(name="pipeline", run_type="chain", inputs={"q": "hi"}, tags=["a"])
    child = root.create_child(name="llm", run_type="llm", inputs={"prompt": "hi"})
    child.add_metadata({"model": "m"})
    child.add_tags("b")
    child.add_event({"name": "token"})
    child.end(outputs={"text": "hello"})
    root.add_outputs({"answer": "hello"})
    root.end(error="boom")
    root.post()
    root.patch()
    assert root.child_runs == [child] and child.parent_run_id == root.id and child.trace_id == root.id
    assert child.metadata == {"model": "m"} and child.tags == ["b"] and child.events == [{"name": "token"}]
    assert child.latency is not None and child.latency >= 0
    assert root.outputs == {"answer": "hello"} and root.error == "boom"
    assert child.dotted_order.split(".")[0] == root.dotted_order
    assert child.dotted_order.endswith(str(child.id))
    root.set(outputs={"replaced": True}, tags=["only"])
    assert root.outputs == {"replaced": True} and root.tags == ["only"]


def test_generators_record_what_they_yielded() -> None:
    @traceable
    def count(n: int) -> Iterator[int]:
        yield from range(n)

    @traceable(reduce_fn=lambda items: {"text": "".join(items)})
    async def tokens() -> AsyncIterator[str]:
        for token in ("a", "b"):
            yield token

    async def collect() -> list[str]:
        return [token async for token in tokens()]

    with trace("root") as root:
        assert list(count(3)) == [0, 1, 2]
        assert asyncio.run(collect()) == ["a", "b"]
        stopped = count(10)
        next(stopped)
        stopped.close()  # the caller stopped early
    full, joined, partial = root.child_runs
    assert full.outputs == {"output": [0, 1, 2]} and full.error is None
    assert joined.outputs == {"text": "ab"}
    assert partial.outputs == {"output": [0]} and partial.error is None


def test_inside_an_experiment_the_row_run_is_the_current_run_tree(client: Client) -> None:
    def target(inputs: dict) -> dict:
        tree = get_current_run_tree()
        tree.add_metadata({"seen": inputs["x"]})
        tree.add_tags(["from-target"])
        with trace("step") as step:
            step.end(outputs={"ok": True})
        return {"y": model("q")}

    results = evaluate(target, data=[{"x": 1}, {"x": 2}], client=client, experiment="traced")
    stored = client.read_experiment("traced")
    for rows in (list(results), list(stored)):
        run = rows[1]["run"]
        assert run.extra["metadata"] == {"seen": 2} and run.tags == ["from-target"]
        assert [c.name for c in run.child_runs] == ["step", "model"]
        assert all(c.parent_run_id == run.id and c.trace_id == run.id for c in run.child_runs)
        assert run.session_id == results.experiment_id
    assert results.rows[0].run.dotted_order.endswith(str(results.rows[0].run.id))
    assert results.rows[0].run.child_runs[0].session_id == results.experiment_id


def test_traceable_target_keeps_one_level(client: Client) -> None:
    @traceable(name="Target")
    def target(inputs: dict) -> dict:
        return {"y": model("a")}

    [row] = list(evaluate(target, data=[{"x": 1}], client=client))
    [traced] = row["run"].child_runs
    assert traced.name == "Target" and [c.name for c in traced.child_runs] == ["model"]


def test_an_unknown_run_type_warns_with_a_hint() -> None:
    with pytest.warns(UserWarning, match=r"Did you mean @traceable\(name='my_step'\)"):
        traceable("my_step")
    with pytest.warns(UserWarning, match="only accepts one positional argument"):
        traceable("llm", "extra")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="run type string positionally"):
        traceable(3)  # type: ignore[call-overload]


def test_is_traceable_function_sees_through_partials_and_callables() -> None:
    import functools

    from assay.run_helpers import is_traceable_function

    class Tool:
        @traceable
        def __call__(self, x: int) -> int:
            return x

    assert is_traceable_function(model) and is_traceable_function(functools.partial(model, "p"))
    assert is_traceable_function(Tool()) and not is_traceable_function(lambda: None)
    assert not is_traceable_function(Tool)


def test_generators_paused_and_resumed_around_other_traced_calls() -> None:
    @traceable
    def expand(query: str) -> list[str]:
        return [query, query.upper()]

    @traceable
    def documents(queries: list[str]) -> Iterator[str]:
        for query in queries:
            with trace("fetch", inputs={"q": query}) as fetch:
                fetch.end(outputs={"doc": query})
            yield f"doc:{query}"

    @traceable
    def note(text: str) -> str:
        with trace("inner", inputs={"text": text}):
            pass
        return text

    @traceable(name="answer")
    def answer(query: str) -> Iterator[str]:
        docs = documents(expand(query))
        first = next(docs)  # paused here while another traced call runs
        note(first)
        yield first
        yield from docs

    ended: list[RunTree] = []
    chunks = list(answer("q", langsmith_extra={"on_end": ended.append, "name": "renamed"}))
    assert chunks == ["doc:q", "doc:Q"]
    [run] = ended
    assert run.name == "renamed" and run.outputs == {"output": ["doc:q", "doc:Q"]}
    assert [c.name for c in run.child_runs] == ["expand", "documents", "note"]
    generated = run.child_runs[1]
    assert [c.name for c in generated.child_runs] == ["fetch", "fetch"]  # not under "note"
    assert [c.name for c in run.child_runs[2].child_runs] == ["inner"]


def test_methods_and_input_output_processing() -> None:
    class Bot:
        @traceable(
            process_inputs=lambda inputs: {
                "secret": "***",
                **{k: v for k, v in inputs.items() if k != "secret"},
            },
            process_outputs=lambda output: {"length": len(output)},
        )
        def reply(self, text: str, secret: str) -> str:
            return text * 2

    with trace("root") as root:
        assert Bot().reply("ab", secret="pw") == "abab"
    [run] = root.child_runs
    assert run.inputs == {"secret": "***", "text": "ab"} and run.outputs == {"length": 4}
