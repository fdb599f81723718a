"""Traced streams: generators, async generators, and iterators returned by a function with
``reduce_fn``, as LangSmith records them.

The run stays open while the stream is consumed. Each item passes through
``process_chunk`` before it is kept; a generator's return value is kept after its items
(and returned to a ``yield from`` caller); ``send`` and ``throw`` reach the generator.
The run ends when the stream ends, raises, or is closed early (keeping what was yielded).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.tracing._traceable import Call


def drive_generator(call: Call, generator: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    """Yield what ``generator`` yields with the call's run current while it runs."""
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        call.resume()
        try:
            item = generator.throw(thrown) if thrown is not None else generator.send(sent)
        except StopIteration as stop:
            call.finish_stream(returned=stop.value)
            return stop.value
        except BaseException as exc:
            call.finish_stream(error=exc)
            raise
        call.suspend()
        call.add_chunk(item)
        sent, thrown = None, None
        try:
            sent = yield item
        except GeneratorExit:  # the caller stopped early: keep what was yielded
            generator.close()
            call.finish_stream()
            raise
        except BaseException as exc:  # thrown in by the caller: the generator decides
            thrown = exc


async def drive_async_generator(call: Call, generator: AsyncGenerator[Any, Any]) -> AsyncGenerator[Any, Any]:
    """The async twin of ``drive_generator`` (async generators return nothing)."""
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        call.resume()
        try:
            item = await (generator.athrow(thrown) if thrown is not None else generator.asend(sent))
        except StopAsyncIteration:
            call.finish_stream()
            return
        except BaseException as exc:
            call.finish_stream(error=exc)
            raise
        call.suspend()
        call.add_chunk(item)
        sent, thrown = None, None
        try:
            sent = yield item
        except GeneratorExit:
            await generator.aclose()
            call.finish_stream()
            raise
        except BaseException as exc:
            thrown = exc


class _Traced:
    """What both traced streams share: the call whose run they end, and every other
    attribute read from the wrapped object."""

    def __init__(self, call: Call, stream: Any) -> None:
        self._call = call
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @property
    def __ls_stream__(self) -> Any:
        """The wrapped stream, by LangSmith's name for it."""
        return self._stream

    def _got(self, item: Any) -> Any:
        self._call.add_chunk(item)
        return item

    def _ended(self, reason: BaseException) -> None:
        """The stream stopped: exhausted (the run ends whole) or raising (with the error)."""
        exhausted = isinstance(reason, (StopIteration, StopAsyncIteration))
        self._call.finish_stream(error=None if exhausted else reason)


class TracedStream(_Traced):
    """An iterator a traced function returned (with ``reduce_fn``): the run ends when it is
    exhausted or raises."""

    def __init__(self, call: Call, stream: Iterable[Any]) -> None:
        super().__init__(call, stream)
        self._iterator: Iterator[Any] = iter(stream)

    def __iter__(self) -> TracedStream:
        return self

    def __next__(self) -> Any:
        try:
            item = next(self._iterator)
        except BaseException as exc:
            self._ended(exc)
            raise
        return self._got(item)

    def __enter__(self) -> TracedStream:
        enter = getattr(self._stream, "__enter__", None)
        if callable(enter):  # the stream's own setup runs; the caller keeps the traced one
            enter()
        return self

    def __exit__(self, *exc_info: Any) -> Any:
        try:
            exit_ = getattr(self._stream, "__exit__", None)
            if callable(exit_):
                return exit_(*exc_info)
            close = getattr(self._stream, "close", None)
            if callable(close):
                close()
            return None
        finally:
            self._call.finish_stream(error=exc_info[1])


class TracedAsyncStream(_Traced):
    """The async twin of ``TracedStream``."""

    def __init__(self, call: Call, stream: AsyncIterator[Any]) -> None:
        super().__init__(call, stream)
        self._iterator = stream.__aiter__()

    def __aiter__(self) -> TracedAsyncStream:
        return self

    async def __anext__(self) -> Any:
        try:
            item = await self._iterator.__anext__()
        except BaseException as exc:
            self._ended(exc)
            raise
        return self._got(item)

    async def __aenter__(self) -> TracedAsyncStream:
        enter = getattr(self._stream, "__aenter__", None)
        if callable(enter):
            await enter()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        try:
            exit_ = getattr(self._stream, "__aexit__", None)
            if callable(exit_):
                return await exit_(*exc_info)
            close = getattr(self._stream, "aclose", None)
            if callable(close):
                await close()
            return None
        finally:
            self._call.finish_stream(error=exc_info[1])
