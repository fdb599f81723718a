"""What LangSmith ports rely on at the edges: ``Attachment`` parameters, and stream
objects a ``reduce_fn`` function returns used as context managers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest

from assay import Client, evaluate, traceable
from assay.schemas import Attachment, Run
from assay.tracing import trace_into


def _traced_once(fn: Any, *args: Any, **kwargs: Any) -> Run:
    with trace_into(Run(name="recorder")) as root:
        fn(*args, **kwargs)
    [run] = root.child_runs
    return run


def test_an_unresolvable_string_annotation_leaves_the_argument_an_input() -> None:
    @traceable
    def foo(a: NotDefinedAnywhere, b: Attachment) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    run = _traced_once(foo, 1, Attachment("text/plain", b"x"))
    # one name cannot be resolved, so no annotation is: both stay inputs, nothing fails
    assert run.inputs == {"a": 1, "b": Attachment("text/plain", b"x")}
    assert run.attachments == {}


def test_process_inputs_does_not_see_attachments_and_extra_ones_join_them() -> None:
    seen: list[dict[str, Any]] = []

    def process_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
        seen.append(dict(inputs))
        return inputs

    @traceable(process_inputs=process_inputs)
    def foo(q: str, image: Annotated[bytes, Attachment]) -> None:
        pass

    extra = {"attachments": {"log": ("text/plain", b"L")}}
    run = _traced_once(foo, "hi", ("image/png", b"P"), langsmith_extra=extra)
    assert seen == [{"q": "hi"}]
    assert run.inputs == {"q": "hi"}
    assert run.attachments == {"image": ("image/png", b"P"), "log": ("text/plain", b"L")}


def test_a_traced_call_with_an_attachment_inside_an_experiment_is_stored(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "store.db"))
    client.create_dataset("d")
    client.create_example({"q": "hi"}, outputs={"a": "hi"}, dataset_name="d")

    @traceable
    def look(q: str, image: Attachment) -> str:
        return q

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"a": look(inputs["q"], Attachment("image/png", b"\x89PNG"))}

    results = evaluate(target, data="d", client=client)
    [row] = list(results)
    assert row["run"].error is None and row["run"].outputs == {"a": "hi"}
    stored = {run.name: run for run in client.list_runs(project_name=results.experiment_name)}
    assert stored["look"].inputs == {"q": "hi"}
    assert stored["look"].attachments == {"image": ("image/png", b"\x89PNG")}


@pytest.mark.parametrize("returned", [[1, 2], {"k": 1}, "text"])
def test_a_returned_container_stays_the_output_with_reduce_fn(returned: Any) -> None:
    @traceable(reduce_fn=lambda items: {"items": items})
    def foo() -> Any:
        return returned

    with trace_into(Run(name="recorder")) as root:
        assert foo() is returned
    [run] = root.child_runs
    assert run.outputs == (returned if isinstance(returned, dict) else {"output": returned})


class _Resource:
    """An iterable stream that is a context manager, recording what happened to it."""

    def __init__(self, items: list[int], suppress: bool = False) -> None:
        self.items, self.suppress = items, suppress
        self.exited_with: list[Any] = []

    def __enter__(self) -> _Resource:
        return self

    def __exit__(self, *exc_info: Any) -> bool:
        self.exited_with.append(exc_info[0])
        return self.suppress

    def __iter__(self) -> Iterator[int]:
        return iter(self.items)


def test_an_error_in_the_with_block_reaches_the_stream_and_the_run() -> None:
    resource = _Resource([1, 2, 3])

    @traceable(reduce_fn=sum)
    def stream() -> _Resource:
        return resource

    with trace_into(Run(name="recorder")) as root:
        with pytest.raises(RuntimeError, match="reader gave up"):
            with stream() as s:
                assert next(s) == 1
                raise RuntimeError("reader gave up")
    [run] = root.child_runs
    assert resource.exited_with == [RuntimeError]
    assert run.error is not None and "reader gave up" in run.error
    assert run.outputs == {"output": 1}  # what was read before the error is kept


def test_the_streams_exit_decides_whether_the_error_is_suppressed() -> None:
    @traceable(reduce_fn=sum)
    def stream() -> _Resource:
        return _Resource([5], suppress=True)

    with trace_into(Run(name="recorder")) as root:
        with stream():
            raise RuntimeError("swallowed by the stream")
    [run] = root.child_runs
    assert run.end_time is not None


async def test_an_async_stream_without_its_own_context_manager_is_closed_by_async_with() -> None:
    closed: list[bool] = []

    async def numbers() -> AsyncIterator[int]:
        try:
            for i in range(10):
                yield i
        finally:
            closed.append(True)

    @traceable(reduce_fn=list)
    def stream() -> AsyncIterator[int]:
        return numbers()

    with trace_into(Run(name="recorder")) as root:
        async with stream() as s:
            assert await anext(s) == 0
            assert await anext(s) == 1
    [run] = root.child_runs
    assert closed == [True]
    assert run.outputs == {"output": [0, 1]} and run.end_time is not None
