"""Port of langsmith-sdk python/tests/unit_tests/test_run_helpers.py (a part), in our words.

Upstream, a ``MagicMock`` HTTP session records what the client posts. Here every run a
call records lands under one real parent run (``trace_into``, the hook an experiment row
uses), so "what was posted" is ``recorded.child_runs``. The private ``_get_inputs`` tests
become tests of the inputs a traced call records. TALLY.md lists the rest.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
import warnings
from collections.abc import AsyncIterator, Generator, Iterator
from typing import Annotated, Any

import pytest

from assay import schemas as ls_schemas
from assay import set_run_metadata
from assay.run_helpers import get_current_run_tree, is_traceable_function, trace, traceable, tracing_context
from assay.run_trees import RunTree
from assay.schemas import Run
from assay.tracing import trace_into


@pytest.fixture
def recorded() -> Iterator[Run]:
    """The parent of every run recorded in the test (upstream: the mocked session)."""
    with trace_into(Run(name="recorder")) as root:
        yield root


def _names(run: Run) -> list[str]:
    """Every run under ``run``, depth first."""
    found: list[str] = []
    for child in run.child_runs:
        found += [child.name, *_names(child)]
    return found


def _recorded_inputs(fn: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    with trace_into(Run(name="recorder")) as root:
        traceable(fn)(*args, **kwargs)
    [run] = root.child_runs
    return run.inputs


def test__get_inputs_with_no_args() -> None:
    def foo() -> None:
        pass

    assert _recorded_inputs(foo) == {}


def test__get_inputs_with_args() -> None:
    def foo(a: int, b: int, c: int) -> None:
        pass

    assert _recorded_inputs(foo, 1, 2, 3) == {"a": 1, "b": 2, "c": 3}


def test__get_inputs_with_defaults() -> None:
    def foo(a: int, b: int, c: int = 3) -> None:
        pass

    assert _recorded_inputs(foo, 1, 2) == {"a": 1, "b": 2, "c": 3}


def test__get_inputs_with_var_args() -> None:
    def foo(a: int, b: int, *kwargs: Any) -> None:  # misnamed on purpose
        pass

    assert _recorded_inputs(foo, 1, 2, 3, 4) == {"a": 1, "b": 2, "kwargs": (3, 4)}


def test__get_inputs_with_var_kwargs() -> None:
    def foo(a: int, b: int, **kwargs: Any) -> None:
        pass

    assert _recorded_inputs(foo, 1, 2, c=3, d=4) == {"a": 1, "b": 2, "c": 3, "d": 4}


def test__get_inputs_with_var_kwargs_and_varargs() -> None:
    def foo(a: int, b: int, *args: Any, **kwargs: Any) -> None:
        pass

    assert _recorded_inputs(foo, 1, 2, 3, 4, c=5, d=6) == {"a": 1, "b": 2, "args": (3, 4), "c": 5, "d": 6}


def test__get_inputs_with_class_method() -> None:
    class Foo:
        @classmethod
        @traceable
        def bar(cls, a: int, b: int) -> None:
            pass

    with trace_into(Run(name="recorder")) as root:
        Foo.bar(1, 2)
    assert root.child_runs[0].inputs == {"a": 1, "b": 2}


def test__get_inputs_with_static_method() -> None:
    class Foo:
        @staticmethod
        def bar(a: int, b: int) -> None:
            pass

    assert _recorded_inputs(Foo.bar, 1, 2) == {"a": 1, "b": 2}


def test__get_inputs_with_self() -> None:
    class Foo:
        @traceable
        def bar(self, a: int, b: int) -> None:
            pass

    with trace_into(Run(name="recorder")) as root:
        Foo().bar(1, 2)
    assert root.child_runs[0].inputs == {"a": 1, "b": 2}


def test__get_inputs_with_kwargs_and_var_kwargs() -> None:
    def foo(a: int, b: int, **kwargs: Any) -> None:
        pass

    assert _recorded_inputs(foo, 1, 2, c=3, **{"d": 4}) == {"a": 1, "b": 2, "c": 3, "d": 4}


def test__get_inputs_with_var_kwargs_and_other_kwargs() -> None:
    def foo(a: int, b: int, **kwargs: Any) -> None:
        pass

    expected = {"a": 1, "b": 2, "c": 3, "other_kwargs": {"d": 4}}
    assert _recorded_inputs(foo, 1, 2, c=3, other_kwargs={"d": 4}) == expected


def test__get_inputs_with_keyword_only_args() -> None:
    def foo(a: int, *, b: int, c: int) -> None:
        pass

    assert _recorded_inputs(foo, 1, b=2, c=3) == {"a": 1, "b": 2, "c": 3}


def test__get_inputs_with_keyword_only_args_and_defaults() -> None:
    def foo(a: int, *, b: int = 2, c: int = 3) -> None:
        pass

    assert _recorded_inputs(foo, 1) == {"a": 1, "b": 2, "c": 3}


def test__get_inputs_misnamed_and_required_keyword_only_args() -> None:
    def foo(kwargs: int, *, b: int, c: int, **some_other_kwargs: Any) -> None:
        pass

    expected = {"kwargs": 1, "b": 2, "c": 3, "d": 4, "e": 5, "other_kwargs": {"f": 6}}
    assert _recorded_inputs(foo, 1, b=2, c=3, d=4, e=5, other_kwargs={"f": 6}) == expected


def test_is_traceable_function() -> None:
    @traceable
    def my_function(a: int, b: int, d: int) -> int:
        return a + b + d

    assert is_traceable_function(my_function)


def test_is_traceable_partial_function() -> None:
    @traceable
    def my_function(a: int, b: int, d: int) -> int:
        return a + b + d

    assert is_traceable_function(functools.partial(my_function, 1, 2))


def test_is_not_traceable_function() -> None:
    def my_function(a: int) -> int:
        return a

    assert not is_traceable_function(my_function)


def test_is_traceable_class_call() -> None:
    class Foo:
        @traceable
        def __call__(self, a: int, b: int) -> None:
            pass

    assert is_traceable_function(Foo())


def test_is_not_traceable_class_call() -> None:
    class Foo:
        def __call__(self, a: int, b: int) -> None:
            pass

    assert not is_traceable_function(Foo())


def _one_user_warning(records: list[warnings.WarningMessage], *needles: str) -> None:
    assert len(records) == 1, [str(r.message) for r in records]
    assert issubclass(records[0].category, UserWarning)
    for needle in needles:
        assert needle in str(records[0].message)


def test_traceable_warning() -> None:
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")

        @traceable(run_type="invalid_run_type")  # type: ignore[call-overload]
        def my_function() -> None:
            pass

    _one_user_warning(
        records,
        "Unrecognized run_type: invalid_run_type",
        "Did you mean @traceable(name='invalid_run_type')?",
    )


def test_traceable_wrong_run_type_pos_arg() -> None:
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")

        @traceable("my_run_type")  # type: ignore[call-overload]
        def my_function() -> None:
            pass

    _one_user_warning(
        records, "Unrecognized run_type: my_run_type", "Did you mean @traceable(name='my_run_type')?"
    )


def test_traceable_too_many_pos_args() -> None:
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")

        @traceable("chain", "my_function")  # type: ignore[call-overload]
        def my_function() -> None:
            pass

    _one_user_warning(records, "only accepts one positional argument")


def test_trace_respects_tracing_context(recorded: Run) -> None:
    with tracing_context(enabled=False):
        with trace(name="foo", inputs={"a": 1}):
            pass
    assert recorded.child_runs == []


def test_trace_nested_enable_disable(recorded: Run) -> None:
    with tracing_context(enabled=True):
        with trace(name="foo", inputs={"a": 1}) as run:
            with tracing_context(enabled=False):
                with trace(name="bar", inputs={"b": 2}) as run2:
                    with tracing_context(enabled=True):
                        with trace(name="baz", inputs={"c": 3}) as run3:
                            run3.end(outputs={"c": 3})
                            run2.end(outputs={"b": 2})
                            run.end(outputs={"a": 1})
    [foo] = recorded.child_runs
    assert foo.name == "foo"
    [baz] = foo.child_runs
    assert baz.name == "baz"
    assert baz.dotted_order is not None and foo.dotted_order is not None
    assert baz.dotted_order.split(".")[-2] == foo.dotted_order.split(".")[-1]


def test_tracing_disabled_project_name_set(recorded: Run) -> None:
    @traceable
    def foo(a: int) -> int:
        return a

    with tracing_context(enabled=False):
        with trace(name="foo", inputs={"a": 1}, project_name="my_project"):
            pass
        foo(1, langsmith_extra={"project_name": "my_project"})
    assert recorded.child_runs == []


def test_traceable_stop_iteration() -> None:
    def my_generator() -> Iterator[int]:
        yield from range(5)
        return ("last", "vals")  # type: ignore[return-value]

    def consume(gen: Any) -> Iterator[int]:
        last_vals = yield from gen()
        assert last_vals == ("last", "vals")

    assert list(consume(my_generator)) == list(range(5))
    assert list(consume(traceable(my_generator))) == list(range(5))


def test_traceable_iterator_process_chunk(recorded: Run) -> None:
    @traceable(process_chunk=lambda x: x["val"])
    def my_iterator_fn(a: int, b: int, d: int, **kwargs: Any) -> Iterator[dict[str, int]]:
        assert kwargs == {"e": 5}
        for i in range(a + b + d):
            yield {"val": i, "squared": i**2}

    assert list(my_iterator_fn(1, 2, 3, e=5)) == [{"val": x, "squared": x**2} for x in range(6)]
    [run] = recorded.child_runs
    assert run.outputs == {"output": list(range(6))}


def test_first_token_event_only() -> None:
    ended: list[RunTree] = []

    @traceable(run_type="llm")
    def token_stream() -> Iterator[str]:
        yield from ["a", "b", "c"]

    with tracing_context(enabled=True):
        list(token_stream(langsmith_extra={"on_end": ended.append}))
    [run] = ended
    assert len([event for event in run.events if event.get("name") == "new_token"]) == 1


async def test_traceable_async_iterator_process_chunk(recorded: Run) -> None:
    @traceable(process_chunk=lambda x: x["val"])
    async def my_iterator_fn(a: int, b: int, d: int, **kwargs: Any) -> AsyncIterator[dict[str, int]]:
        assert kwargs == {"e": 5}
        for i in range(a + b + d):
            yield {"val": i, "squared": i**2}

    assert [x async for x in my_iterator_fn(1, 2, 3, e=5)] == [{"val": x, "squared": x**2} for x in range(6)]
    [run] = recorded.child_runs
    assert run.outputs == {"output": list(range(6))}


def test_set_run_metadata_updates_current_run_tree() -> None:
    @traceable
    def instrumented() -> RunTree:
        set_run_metadata(foo=1)
        set_run_metadata(bar="two")
        current = get_current_run_tree()
        assert current is not None
        return current

    with tracing_context(enabled=True):
        run_tree = instrumented()
    assert run_tree.metadata["foo"] == 1
    assert run_tree.metadata["bar"] == "two"


def test_set_run_metadata_without_active_run_tree(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        set_run_metadata(foo=1)
    [record] = [r for r in caplog.records if r.name.startswith("assay")]
    assert "No active run tree found" in record.getMessage()


def _double(enabled: bool | None) -> Any:
    options = {} if enabled is None else {"enabled": enabled}

    @traceable(**options)
    def my_function(a: int) -> int:
        return a * 2

    return my_function


def test_traceable_enabled_false_overrides_context(recorded: Run) -> None:
    with tracing_context(enabled=True):
        assert _double(False)(5) == 10
    assert recorded.child_runs == []


def test_traceable_enabled_true_overrides_context(recorded: Run) -> None:
    with tracing_context(enabled=False):
        assert _double(True)(5) == 10
    assert _names(recorded) == ["my_function"]


def test_traceable_enabled_none_respects_context_enabled(recorded: Run) -> None:
    with tracing_context(enabled=True):
        assert _double(None)(5) == 10
    assert _names(recorded) == ["my_function"]


def test_traceable_enabled_none_respects_context_disabled(recorded: Run) -> None:
    with tracing_context(enabled=False):
        assert _double(None)(5) == 10
    assert recorded.child_runs == []


def test_traceable_config_attribute() -> None:
    def my_process_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
        return inputs

    def my_process_outputs(outputs: Any) -> dict[str, Any]:
        return {"output": outputs}

    @traceable(
        enabled=False,
        process_inputs=my_process_inputs,
        process_outputs=my_process_outputs,
        tags=["tag1", "tag2"],
        metadata={"key": "value"},
    )
    def my_function(a: int) -> int:
        return a * 2

    config = my_function.__traceable_config__  # type: ignore[attr-defined]
    assert config["enabled"] is False
    assert config["process_inputs"] is my_process_inputs
    assert config["process_outputs"] is my_process_outputs
    assert config["tags"] == ["tag1", "tag2"]
    assert config["metadata"] == {"key": "value"}


def test_traceable_config_defaults() -> None:
    @traceable
    def my_function(a: int) -> int:
        return a * 2

    config = my_function.__traceable_config__  # type: ignore[attr-defined]
    for name in ("enabled", "process_inputs", "process_outputs", "tags", "metadata"):
        assert config[name] is None, name


async def test_traceable_async_enabled_false(recorded: Run) -> None:
    @traceable(enabled=False)
    async def my_async_function(a: int) -> int:
        return a * 2

    with tracing_context(enabled=True):
        assert await my_async_function(5) == 10
    assert recorded.child_runs == []


async def test_traceable_async_enabled_true_overrides_context(recorded: Run) -> None:
    @traceable(enabled=True)
    async def my_async_function(a: int) -> int:
        return a * 2

    with tracing_context(enabled=False):
        assert await my_async_function(5) == 10
    assert _names(recorded) == ["my_async_function"]


def test_traceable_generator_enabled_false(recorded: Run) -> None:
    @traceable(enabled=False)
    def my_generator(n: int) -> Iterator[int]:
        yield from range(n)

    with tracing_context(enabled=True):
        assert list(my_generator(5)) == [0, 1, 2, 3, 4]
    assert recorded.child_runs == []


async def test_traceable_async_generator_enabled_false(recorded: Run) -> None:
    @traceable(enabled=False)
    async def my_async_generator(n: int) -> AsyncIterator[int]:
        for i in range(n):
            yield i

    with tracing_context(enabled=True):
        assert [x async for x in my_async_generator(5)] == [0, 1, 2, 3, 4]
    assert recorded.child_runs == []


def test_traceable_enabled_does_not_propagate(recorded: Run) -> None:
    """Upstream checks the posted names; here the inner run is a root of its own (the
    outer call hides its caller's run), so it is seen from inside."""
    inner_runs: list[Any] = []

    @traceable(enabled=False)
    def outer_function(a: int) -> int:
        return inner_function(a)

    @traceable(enabled=True)
    def inner_function(a: int) -> int:
        inner_runs.append(get_current_run_tree())
        return a * 2

    with tracing_context(enabled=True):
        assert outer_function(5) == 10
    assert recorded.child_runs == []  # outer is not traced
    [inner] = inner_runs
    assert inner.name == "inner_function" and inner.parent_run_id is None


def test_traceable_nested_outer_enabled_inner_disabled(recorded: Run) -> None:
    @traceable(enabled=True)
    def outer_function(a: int) -> int:
        return inner_function(a)

    @traceable(enabled=False)
    def inner_function(a: int) -> int:
        return a * 2

    with tracing_context(enabled=True):
        assert outer_function(5) == 10
    assert _names(recorded) == ["outer_function"]


def test_traceable_disabled_clears_parent_context(recorded: Run) -> None:
    @traceable(enabled=True)
    def outer_function(a: int) -> int:
        assert getattr(get_current_run_tree(), "name", None) == "outer_function"
        result = inner_disabled(a)
        assert getattr(get_current_run_tree(), "name", None) == "outer_function"
        return result

    @traceable(enabled=False)
    def inner_disabled(a: int) -> int:
        assert get_current_run_tree() is None, "a disabled call must not see its caller's run"
        return a * 2

    with tracing_context(enabled=True):
        assert outer_function(5) == 10
    assert _names(recorded) == ["outer_function"]


@pytest.mark.parametrize(
    "decorator_enabled, context_enabled, should_trace",
    [
        (None, True, True),
        (None, False, False),
        (True, True, True),
        (True, False, True),
        (False, True, False),
        (False, False, False),
    ],
)
def test_traceable_enabled_matrix(
    recorded: Run, decorator_enabled: bool | None, context_enabled: bool, should_trace: bool
) -> None:
    with tracing_context(enabled=context_enabled):
        assert _double(decorator_enabled)(5) == 10
    assert _names(recorded) == (["my_function"] if should_trace else [])


@pytest.mark.parametrize("auto_batch_tracing", [True, False])
async def test_traceable_async_exception(recorded: Run, auto_batch_tracing: bool) -> None:
    """``auto_batch_tracing`` is how LangSmith sends runs; here it changes nothing."""

    @traceable
    async def my_function(a: int) -> int:
        raise ValueError("foo")

    with tracing_context(enabled=True):
        with pytest.raises(ValueError, match="foo"):
            await my_function(1)
    [run] = recorded.child_runs
    assert run.error is not None and "foo" in run.error and run.end_time is not None


@pytest.mark.parametrize("auto_batch_tracing", [True, False])
async def test_traceable_async_gen_exception(recorded: Run, auto_batch_tracing: bool) -> None:
    @traceable
    async def my_function(a: int) -> AsyncIterator[int]:
        for i in range(5):
            yield i
        raise ValueError("foo")

    with tracing_context(enabled=True):
        with pytest.raises(ValueError, match="foo"):
            async for _ in my_function(1):
                pass
    [run] = recorded.child_runs
    assert run.outputs == {"output": list(range(5))}
    assert run.error is not None and "foo" in run.error


@pytest.mark.parametrize("auto_batch_tracing", [True, False])
def test_traceable_gen_exception(recorded: Run, auto_batch_tracing: bool) -> None:
    @traceable
    def my_function(a: int) -> Iterator[int]:
        yield from range(5)
        raise ValueError("foo")

    with tracing_context(enabled=True):
        with pytest.raises(ValueError, match="foo"):
            for _ in my_function(1):
                pass
    [run] = recorded.child_runs
    assert run.outputs == {"output": list(range(5))}
    assert run.error is not None and "foo" in run.error


@pytest.mark.parametrize("env_var", [True, False])
@pytest.mark.parametrize("context", [True, False, None])
async def test_trace_respects_env_var(
    recorded: Run, monkeypatch: pytest.MonkeyPatch, env_var: bool, context: bool | None
) -> None:
    """Documented difference: tracing is on unless turned off in code; LANGSMITH_TRACING is
    not read (with no tracing_context, LangSmith follows the variable)."""
    monkeypatch.setenv("LANGSMITH_TRACING", "true" if env_var else "false")
    with tracing_context(enabled=context):
        with trace(name="foo", inputs={"a": 1}) as run:
            assert run.name == "foo"
        async with trace(name="bar", inputs={"b": 2}) as run2:
            assert run2.name == "bar"
    assert _names(recorded) == ([] if context is False else ["foo", "bar"])


@pytest.mark.parametrize("enabled", [True, "local"])
def test_traceable_regular(enabled: Any) -> None:
    @traceable
    def some_sync_func(query: str, **kwargs: Any) -> list[str]:
        assert kwargs == {"a": 1, "b": 2}
        return [query, query]

    @traceable
    def some_func(queries: list[str]) -> list[str]:
        return queries

    @traceable
    def another_func(query: str) -> str:
        with trace(name="zee-cm", inputs={"query": query}) as run_tree:
            run_tree.end(outputs={"query": query})
        return query

    @traceable
    def create_document_context(documents: list[str]) -> str:
        return "\n".join(documents)

    @traceable
    def summarize_answers(query: str, document_context: str) -> list[str]:
        return [f"Answer {i}" for i in range(3)]

    @traceable(run_type="chain", name="expand_and_answer_questions")
    def my_answer(query: str) -> list[str]:
        documents = some_func(queries=some_sync_func(query=query, a=1, b=2))
        another_func(query=query)
        context = create_document_context(documents=documents)
        return documents + summarize_answers(query=query, document_context=context)

    ended: list[RunTree] = []
    with tracing_context(enabled=enabled):
        answer = my_answer("some_query", langsmith_extra={"on_end": ended.append})
    assert answer == ["some_query", "some_query", "Answer 0", "Answer 1", "Answer 2"]
    [run] = ended
    assert run.name == "expand_and_answer_questions"
    assert _names(run) == [
        "some_sync_func",
        "some_func",
        "another_func",
        "zee-cm",
        "create_document_context",
        "summarize_answers",
    ]


@pytest.mark.parametrize("enabled", [True, "local"])
def test_traceable_to_trace(enabled: Any) -> None:
    @traceable
    def parent_fn(a: int, b: int) -> int:
        with trace(name="child_fn", inputs={"a": a, "b": b}) as run_tree:
            result = a + b
            run_tree.end(outputs={"result": result})
        return result

    ended: list[RunTree] = []
    with tracing_context(enabled=enabled):
        assert parent_fn(1, 2, langsmith_extra={"on_end": ended.append}) == 3
    [run] = ended
    assert (run.name, run.outputs, run.inputs) == ("parent_fn", {"output": 3}, {"a": 1, "b": 2})
    assert [(c.name, c.outputs) for c in run.child_runs] == [("child_fn", {"result": 3})]


@pytest.mark.parametrize("enabled", [True, "local"])
def test_trace_to_traceable(enabled: Any) -> None:
    @traceable
    def child_fn(a: int, b: int) -> int:
        return a + b

    rid = uuid.uuid4()
    with tracing_context(enabled=enabled):
        with trace(name="parent_fn", inputs={"a": 1, "b": 2}, run_id=rid) as run:
            result = child_fn(1, 2)
            run.end(outputs={"result": result})
            assert run.id == rid
    assert result == 3
    assert (run.name, run.outputs, run.inputs) == ("parent_fn", {"result": 3}, {"a": 1, "b": 2})
    assert [c.name for c in run.child_runs] == ["child_fn"]


# --- streams: generators, iterators and stream objects a traced function returns ---


@pytest.mark.parametrize("use_next", [True, False])
@pytest.mark.parametrize("return_val", [None, "foo"])
def test_traceable_iterator(recorded: Run, use_next: bool, return_val: str | None) -> None:
    @traceable
    def my_iterator_fn(a: int, b: int, d: int, **kwargs: Any) -> Generator[int, None, str | None]:
        assert kwargs == {"e": 5}
        yield from range(a + b + d)
        return return_val

    expected: list[Any] = [0, 1, 2, 3, 4, 5]
    if return_val is not None:
        expected.append(return_val)
    genout = my_iterator_fn(1, 2, 3, e=5)
    results: list[Any] = []
    if use_next:
        while True:
            try:
                results.append(next(genout))
            except StopIteration as stop:
                assert stop.value == return_val
                if stop.value is not None:
                    results.append(stop.value)
                break
    else:
        results = list(genout)
        if return_val is not None:
            results.append(return_val)
    assert results == expected
    [run] = recorded.child_runs
    assert run.outputs == {"output": expected}
    assert run.inputs == {"a": 1, "b": 2, "d": 3, "e": 5}


class MyStreamObject:
    """A stream an SDK returns: an iterator that is not a generator."""

    def __init__(self, some_values: list[int]) -> None:
        self.vals = some_values
        self._iter = iter(self.vals)

    def __next__(self) -> int:
        return next(self._iter)

    def __iter__(self) -> Iterator[int]:
        yield from self.vals


class MyAsyncStreamObject:
    def __init__(self, some_values: list[int]) -> None:
        self.vals = some_values

        async def values() -> AsyncIterator[int]:
            for val in some_values:
                yield val

        self._iter = values()

    async def __anext__(self) -> int:
        return await anext(self._iter)

    async def __aiter__(self) -> AsyncIterator[int]:
        async for val in self._iter:
            yield val


@pytest.mark.parametrize("use_next", [True, False])
@pytest.mark.parametrize("response_type", ["sync", "async"])
async def test_traceable_stream(recorded: Run, use_next: bool, response_type: str) -> None:
    """Upstream parametrizes ``["async", "async"]``; the sync stream object is tested too."""

    def reduce_fn(results: list[int]) -> dict[str, Any]:
        return {"my_output": results}

    @traceable(reduce_fn=reduce_fn)
    def my_stream_fn(a: int, b: int, d: int, **kwargs: Any) -> Any:
        assert kwargs == {"e": 5}
        vals = [0, 1, 2, 3, 4, 5]
        return MyStreamObject(vals) if response_type == "sync" else MyAsyncStreamObject(vals)

    expected = [0, 1, 2, 3, 4, 5]
    genout = my_stream_fn(1, 2, 3, e=5)
    [run] = recorded.child_runs
    assert run.end_time is None, "the run stays open while the stream is consumed"
    results: list[int] = []
    if response_type == "sync" and use_next:
        while True:
            try:
                results.append(next(genout))
            except StopIteration:
                break
    elif response_type == "sync":
        results = list(genout)
    elif use_next:
        while True:
            try:
                results.append(await anext(genout))
            except StopAsyncIteration:
                break
    else:
        results = [r async for r in genout]
    assert results == expected
    assert (run.name, run.outputs) == ("my_stream_fn", {"my_output": expected})
    assert run.end_time is not None


@pytest.mark.parametrize("use_next", [True, False])
async def test_traceable_async_iterator(recorded: Run, use_next: bool) -> None:
    def filter_inputs(kwargs: dict[str, Any]) -> dict[str, Any]:
        return {"a": "FOOOOOO", "b": kwargs["b"], "d": kwargs["d"]}

    @traceable(process_inputs=filter_inputs)
    async def my_iterator_fn(a: int, b: int, d: int, **kwargs: Any) -> AsyncIterator[int]:
        assert kwargs == {"e": 5}
        for i in range(a + b + d):
            yield i

    expected = [0, 1, 2, 3, 4, 5]
    genout = my_iterator_fn(1, 2, 3, e=5)
    results: list[int] = []
    if use_next:
        while True:
            try:
                results.append(await anext(genout))
            except StopAsyncIteration:
                break
    else:
        results = [item async for item in genout]
    assert results == expected
    [run] = recorded.child_runs
    assert run.inputs == {"a": "FOOOOOO", "b": 2, "d": 3}
    assert run.outputs == {"output": expected}


def test_traceable_iterator_noargs(recorded: Run) -> None:
    @traceable
    def my_iterator_fn(a: int, b: int, d: int) -> Iterator[int]:
        yield from range(a + b + d)

    assert list(my_iterator_fn(1, 2, 3)) == [0, 1, 2, 3, 4, 5]
    assert [run.outputs for run in recorded.child_runs] == [{"output": [0, 1, 2, 3, 4, 5]}]


async def test_traceable_async_iterator_noargs(recorded: Run) -> None:
    @traceable
    async def my_iterator_fn(a: int, b: int, d: int) -> AsyncIterator[int]:
        for i in range(a + b + d):
            yield i

    assert [i async for i in my_iterator_fn(1, 2, 3)] == [0, 1, 2, 3, 4, 5]
    assert [run.outputs for run in recorded.child_runs] == [{"output": [0, 1, 2, 3, 4, 5]}]


class SyncCtxStream:
    """An iterable stream that is also a context manager (not itself an iterator)."""

    def __init__(self) -> None:
        self.entered = False
        self.exited = False

    def __enter__(self) -> SyncCtxStream:
        self.entered = True
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.exited = True

    def __iter__(self) -> Iterator[str]:
        return iter([])


def test_traceable_stream_context_manager_returns_wrapper(recorded: Run) -> None:
    @traceable(reduce_fn=lambda chunks: chunks)
    def my_stream_fn() -> SyncCtxStream:
        return SyncCtxStream()

    stream = my_stream_fn()
    with stream as s:
        assert s is stream
    # the wrapped stream's own __enter__/__exit__ ran
    assert stream.__ls_stream__.entered
    assert stream.__ls_stream__.exited
    [run] = recorded.child_runs
    assert run.outputs == {"output": []} and run.end_time is not None


class AsyncCtxStream:
    def __init__(self) -> None:
        self.entered = False
        self.exited = False
        self._done = False

    async def __aenter__(self) -> AsyncCtxStream:
        self.entered = True
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.exited = True

    def __aiter__(self) -> AsyncCtxStream:
        return self

    async def __anext__(self) -> str:
        if self._done:
            raise StopAsyncIteration
        self._done = True
        return "chunk"


async def test_traceable_async_stream_context_manager_returns_wrapper(recorded: Run) -> None:
    @traceable(reduce_fn=lambda chunks: chunks)
    async def my_stream_fn() -> AsyncCtxStream:
        return AsyncCtxStream()

    stream = await my_stream_fn()
    async with stream as s:
        assert s is stream
        assert [item async for item in s] == ["chunk"]
    assert stream.__ls_stream__.entered
    assert stream.__ls_stream__.exited
    [run] = recorded.child_runs
    assert run.outputs == {"output": ["chunk"]} and run.end_time is not None


# --- nested sync / async / generator pipelines ---

_PIPELINE_ANSWER = ["some_query", "some_query", "Answer 0", "Answer 1", "Answer 2"]
_PIPELINE_RUNS = [
    "some_sync_func",
    "some_async_func",
    "another_async_func",
    "zee-cm",
    "create_document_context",
    "summarize_answers",
]


async def test_async_generator() -> None:
    @traceable
    def some_sync_func(query: str) -> list[str]:
        return [query, query]

    @traceable
    async def some_async_func(queries: list[str]) -> AsyncIterator[str]:
        await asyncio.sleep(0)
        for query in queries:
            yield query

    @traceable
    async def another_async_func(query: str) -> str:
        rid = uuid.uuid4()
        with trace(name="zee-cm", inputs={"query": query}, run_id=rid) as run_tree:
            run_tree.end(outputs={"query": query})
            assert run_tree.id == rid
        return query

    @traceable
    async def create_document_context(documents: list[str]) -> str:
        await asyncio.sleep(0)
        return "\n".join(documents)

    @traceable
    async def summarize_answers(query: str, document_context: str) -> AsyncIterator[str]:
        await asyncio.sleep(0)
        for i in range(3):
            yield f"Answer {i}"

    @traceable(run_type="chain", name="expand_and_answer_questions")
    async def my_answer(query: str) -> AsyncIterator[Any]:
        expanded_terms = some_sync_func(query=query)
        docs_gen = some_async_func(queries=expanded_terms)
        documents = []
        async for document in docs_gen:
            documents.append(document)
            break
        await another_async_func(query=query)
        for document in documents:
            yield document
        async for document in docs_gen:
            documents.append(document)
            yield document
        document_context = await create_document_context(documents=documents)
        async for chunk in summarize_answers(query=query, document_context=document_context):
            yield chunk

    ended: list[RunTree] = []
    with tracing_context(enabled=True):
        all_chunks = [c async for c in my_answer("some_query", langsmith_extra={"on_end": ended.append})]
    assert all_chunks == _PIPELINE_ANSWER
    [run] = ended
    assert run.name == "expand_and_answer_questions"
    assert run.outputs == {"output": _PIPELINE_ANSWER}
    assert _names(run) == _PIPELINE_RUNS
    # the generator paused after one document and resumed later: still one run, all it yielded
    assert run.child_runs[1].outputs == {"output": ["some_query", "some_query"]}


def test_generator() -> None:
    @traceable
    def some_sync_func(query: str) -> list[str]:
        return [query, query]

    @traceable
    def some_func(queries: list[str]) -> Iterator[str]:
        yield from queries

    @traceable
    def another_func(query: str) -> str:
        with trace(name="zee-cm", inputs={"query": query}) as run_tree:
            run_tree.end(outputs={"query": query})
        return query

    @traceable
    def create_document_context(documents: list[str]) -> str:
        return "\n".join(documents)

    @traceable
    def summarize_answers(query: str, document_context: str) -> Iterator[str]:
        for i in range(3):
            yield f"Answer {i}"

    @traceable(run_type="chain", name="expand_and_answer_questions")
    def my_answer(query: str) -> Iterator[Any]:
        expanded_terms = some_sync_func(query=query)
        docs_gen = some_func(queries=expanded_terms)
        documents = []
        for document in docs_gen:
            documents.append(document)
            break
        another_func(query=query)
        yield from documents
        for document in docs_gen:
            documents.append(document)
            yield document
        document_context = create_document_context(documents=documents)
        yield from summarize_answers(query=query, document_context=document_context)

    ended: list[RunTree] = []
    with tracing_context(enabled=True):
        extra = {"name": "test_overridding_name", "on_end": ended.append}
        all_chunks = list(my_answer("some_query", langsmith_extra=extra))
    assert all_chunks == _PIPELINE_ANSWER
    [run] = ended
    assert run.name == "test_overridding_name"
    assert _names(run) == [
        "some_sync_func",
        "some_func",
        "another_func",
        "zee-cm",
        "create_document_context",
        "summarize_answers",
    ]


@pytest.mark.parametrize("enabled", [True, "local"])
async def test_traceable_async(enabled: Any) -> None:
    @traceable
    def some_sync_func(query: str) -> list[str]:
        return [query, query]

    @traceable
    async def some_async_func(queries: list[str], *, required: str, **kwargs: Any) -> list[str]:
        assert required == "foo"
        assert kwargs == {"a": 1, "b": 2}
        await asyncio.sleep(0)
        return queries

    @traceable
    async def another_async_func(query: str) -> str:
        with trace(name="zee-cm", inputs={"query": query}) as run_tree:
            run_tree.end(outputs={"query": query})
        return query

    @traceable
    async def create_document_context(documents: list[str]) -> str:
        await asyncio.sleep(0)
        return "\n".join(documents)

    @traceable
    async def summarize_answers(query: str, document_context: str) -> list[str]:
        await asyncio.sleep(0)
        return [f"Answer {i}" for i in range(3)]

    @traceable(run_type="chain", name="expand_and_answer_questions")
    async def my_answer(query: str) -> list[str]:
        expanded_terms = some_sync_func(query=query)
        documents = await some_async_func(queries=expanded_terms, required="foo", a=1, b=2)
        await another_async_func(query=query)
        document_context = await create_document_context(documents=documents)
        return documents + await summarize_answers(query=query, document_context=document_context)

    ended: list[RunTree] = []
    with tracing_context(enabled=enabled):
        all_chunks = await my_answer("some_query", langsmith_extra={"on_end": ended.append})
    assert all_chunks == _PIPELINE_ANSWER
    [run] = ended
    assert run.name == "expand_and_answer_questions"
    assert _names(run) == _PIPELINE_RUNS
    assert run.child_runs[1].inputs == {"queries": ["some_query"] * 2, "required": "foo", "a": 1, "b": 2}


@pytest.mark.parametrize("enabled", [True, "local"])
async def test_traceable_to_atrace(enabled: Any) -> None:
    """Upstream also counts the posts (none with "local"); here nothing is posted either way."""

    @traceable
    async def great_grandchild_fn(a: int, b: int) -> int:
        return a + b

    @traceable
    async def parent_fn(a: int, b: int) -> int:
        async with trace(name="child_fn", inputs={"a": a, "b": b}) as run_tree:
            async with trace("grandchild_fn", inputs={"a": a, "b": b, "c": "oh my"}) as run_tree_gc:
                try:
                    async with trace("expect_error", inputs={}):
                        raise ValueError("oh no")
                except ValueError:
                    pass
                result = await great_grandchild_fn(a, b)
                run_tree_gc.end(outputs={"result": result})
            run_tree.end(outputs={"result": result})
        return result

    ended: list[RunTree] = []
    with tracing_context(enabled=enabled):
        result = await parent_fn(1, 2, langsmith_extra={"on_end": ended.append})
    assert result == 3
    [run] = ended
    assert (run.name, run.outputs, run.inputs) == ("parent_fn", {"output": 3}, {"a": 1, "b": 2})
    assert _names(run) == ["child_fn", "grandchild_fn", "expect_error", "great_grandchild_fn"]
    [child] = run.child_runs
    [grandchild] = child.child_runs
    failed, great_grandchild = grandchild.child_runs
    assert failed.error is not None and "oh no" in failed.error
    assert great_grandchild.outputs == {"output": 3}


class Untruthy:
    def __init__(self, val: Any) -> None:
        self.val = val

    def __bool__(self) -> bool:
        raise ValueError("I'm not truthy")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Untruthy):
            return bool(self.val == other.val)
        return bool(self.val == other)

    __hash__ = None  # type: ignore[assignment]


async def test_process_inputs_outputs() -> None:
    in_s = "what's life's meaning"

    def process_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
        assert inputs == {"val": in_s, "ooblek": "nada"}
        inputs["val2"] = "this is mutated"
        return {"serialized_in": "what's the meaning of life?"}

    def process_outputs(outputs: int) -> dict[str, Any]:
        assert outputs == 42
        return {"serialized_out": 24}

    def reducer(outputs: list[Any]) -> dict[str, Any]:
        return {"reduced": outputs[0]}

    def process_reduced_outputs(outputs: dict[str, Any]) -> dict[str, Any]:
        assert outputs == {"reduced": 42}
        return {"serialized_out": 24}

    @traceable(process_inputs=process_inputs, process_outputs=process_outputs)
    def my_function(val: str, **kwargs: Any) -> int:
        assert not kwargs.get("val2")
        return 42

    @traceable(process_inputs=process_inputs, process_outputs=process_outputs)
    async def amy_function(val: str, **kwargs: Any) -> Any:
        assert not kwargs.get("val2")
        return Untruthy(42)

    @traceable(process_inputs=process_inputs, process_outputs=process_reduced_outputs, reduce_fn=reducer)
    def my_gen(val: str, **kwargs: Any) -> Iterator[int]:
        assert not kwargs.get("val2")
        yield 42

    @traceable(process_inputs=process_inputs, process_outputs=process_reduced_outputs, reduce_fn=reducer)
    async def amy_gen(val: str, **kwargs: Any) -> AsyncIterator[Any]:
        assert not kwargs.get("val2")
        yield Untruthy(42)

    with trace_into(Run(name="recorder")) as root, tracing_context(enabled=True):
        assert my_function(in_s, ooblek="nada") == 42
        assert await amy_function(in_s, ooblek="nada") == 42
        assert list(my_gen(in_s, ooblek="nada")) == [42]
        assert [i async for i in amy_gen(in_s, ooblek="nada")] == [42]
    assert _names(root) == ["my_function", "amy_function", "my_gen", "amy_gen"]
    for run in root.child_runs:
        assert run.inputs == {"serialized_in": "what's the meaning of life?"}, run.name
        assert run.outputs == {"serialized_out": 24}, run.name
        assert run.error is None, run.name


# --- attachments: arguments annotated Attachment are the run's attachments ---


def test_traceable_input_attachments() -> None:
    """Upstream reads the multipart upload; here the run holds them. (Its runtime-environment
    part is not applicable: assay adds no runtime metadata to runs.)"""

    @traceable
    def my_func(
        val: int,
        att1: ls_schemas.Attachment,
        att2: Annotated[tuple[str, str], ls_schemas.Attachment],
        run_tree: RunTree,
    ) -> str:
        run_tree.attachments["anoutput"] = ls_schemas.Attachment(mime_type="text/plain", data=b"noidea")
        return "foo"

    long_content = b"c" * 20_000_000
    ended: list[RunTree] = []
    with tracing_context(enabled=True):
        result = my_func(  # type: ignore[call-arg]
            42,
            ls_schemas.Attachment(mime_type="text/plain", data=long_content),
            ("application/octet-stream", "content2"),
            langsmith_extra={"on_end": ended.append},
        )
    assert result == "foo"
    [run] = ended
    assert run.inputs == {"val": 42}
    assert set(run.attachments) == {"att1", "att2", "anoutput"}
    assert tuple(run.attachments["att1"]) == ("text/plain", long_content)
    assert tuple(run.attachments["att2"]) == ("application/octet-stream", "content2")
    assert tuple(run.attachments["anoutput"]) == ("text/plain", b"noidea")


def test__get_inputs_and_attachments_safe_unhashable_default() -> None:
    def foo(x: dict[str, Any] = {}) -> str:  # noqa: B006 (the unhashable default is the point)
        return "bar"

    assert _recorded_inputs(foo) == {"x": {}}
    assert _recorded_inputs(foo, {"a": "b"}) == {"x": {"a": "b"}}
    assert _recorded_inputs(foo, x={"b": "c"}) == {"x": {"b": "c"}}


def test_attachment_detection_with_string_annotations() -> None:
    def foo(bar: "Annotated[bytes, ls_schemas.Attachment]") -> str:  # noqa: UP037 (a string on purpose)
        return "test"

    test_attachment = ls_schemas.Attachment(mime_type="text/plain", data=b"test")
    with trace_into(Run(name="recorder")) as root:
        traceable(foo)(test_attachment)
    [run] = root.child_runs
    assert run.inputs == {}
    assert run.attachments == {"bar": test_attachment}


def test_traceable_triple_decorated(recorded: Run) -> None:
    """Other decorators around and under ``traceable`` do not change what is traced."""

    def some_decorator(func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)

        return wrapper

    def some_other_decorator(func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)

        return wrapper

    @some_decorator
    def original_function(a: int) -> str:
        return f"foo {a}"

    wrapped_function = some_other_decorator(traceable(enabled=True)(original_function))
    assert wrapped_function(5) == "foo 5"
    assert _names(recorded) == ["original_function"]
    assert recorded.child_runs[0].inputs == {"a": 5}
    config = wrapped_function.__traceable_config__
    assert config["enabled"] is True
    assert config["process_inputs"] is None
    assert config["process_outputs"] is None
    assert config["tags"] is None
    assert config["metadata"] is None
    assert config["wrapped"] is original_function
