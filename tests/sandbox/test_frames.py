"""Frames: the direct C encoder and scanner give exactly what ``json`` gives, and
every malformed frame is a ``FrameError``, whoever sent it (another language's
harness may pad with whitespace; a hostile one sends anything)."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import pytest

from assay.sandbox import Call, SandboxPool, get_language
from assay.sandbox.harness import codec, frames
from assay.sandbox.harness.frames import FrameBuffer, FrameError, decode_body, encode_frame

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
PY = get_language("python")
MESSAGES: list[Any] = [
    {"ok": True, "value": codec.encode({1: [2.5, -0.0]}), "time": {"wall_ms": 0.01, "cpu_ms": 0.0}},
    {"args": codec.encode([2**100, "\ud800", "a\x00b", "é😀"]), "kwargs": codec.encode({})},
    [None, True, False, 0, -1, 1.5e-300, "", [], {}],
    "a bare string",
    12345678901234567890,
    {"nested": [[[[{"k": "v"}]]]]},
]


@pytest.mark.parametrize("message", MESSAGES)
def test_a_frame_is_the_compact_json_of_its_message(message: Any) -> None:
    body = encode_frame(message)[frames.HEADER.size :]
    assert decode_body(body) == message == json.loads(body)
    expected = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        assert body == expected.encode()
    except UnicodeEncodeError:  # lone surrogates travel escaped
        assert body == json.dumps(message, separators=(",", ":")).encode()


def test_a_lone_surrogate_leaves_a_python_candidate_intact(pool: SandboxPool) -> None:
    code = "def f(s):\n    return s[::-1], s + '\\udfff'\n"
    run = pool.run_function(PY, code, "f", [Call(args=("\ud800x",))], timeout=10)
    assert run.outcomes[0].ok, run.outcomes[0]
    assert run.outcomes[0].value == ("x\ud800", "\ud800x\udfff")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, {"x": [math.nan]}])
def test_values_json_cannot_carry_are_refused_when_encoding(bad: Any) -> None:
    with pytest.raises(ValueError):
        encode_frame(bad)


def test_objects_json_cannot_carry_are_refused_when_encoding() -> None:
    with pytest.raises(TypeError):
        encode_frame({"x": object()})
    with pytest.raises(TypeError):
        encode_frame({(1, 2): "tuple keys are not JSON"})


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b' {"a": 1} ', {"a": 1}),  # whitespace around: json.loads's own rules
        (b"\n[1, 2]\n", [1, 2]),
        (b'"\\ud800"', "\ud800"),  # a lone surrogate, escaped, survives
        (b"NaN", None),  # json.loads accepts NaN; compared below with isnan
    ],
)
def test_bodies_json_loads_accepts_decode_the_same(body: bytes, expected: Any) -> None:
    decoded = decode_body(body)
    if expected is None:
        assert math.isnan(decoded)
    else:
        assert decoded == expected == json.loads(body)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   ",
        b'{"a": 1} trailing',
        b'{"a": 1}{"b": 2}',
        b"[1, 2",
        b"{'single': 'quotes'}",
        b"\xff\xfe",
        b"1" * 5000,  # more digits than Python converts
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the recursion limit
    ],
)
def test_every_malformed_body_is_a_frame_error(body: bytes) -> None:
    with pytest.raises(FrameError):
        decode_body(body)
    with pytest.raises(FrameError):
        FrameBuffer().feed(struct.pack(">I", len(body)) + body)


def test_a_failed_scan_leaves_nothing_behind_for_the_next_frame() -> None:
    with pytest.raises(FrameError):
        decode_body(b'{"key": [1, 2')
    assert decode_body(b'{"key":[1,2]}') == {"key": [1, 2]}
