"""The built-in checkers, fed as a pipe would feed them: any chunking gives the same
verdict, the first difference names its line, and memory stays bounded whatever the
program prints."""

from __future__ import annotations

import io
import random
import tracemalloc

import pytest

from assay.evaluators.programs._checkers import CheckerSpec, Comparison

MIB = 1 << 20


def compare(name: str, expected: bytes, got: bytes, chunk: int = 7, **tolerances: float) -> str | None:
    comparison = Comparison(CheckerSpec(name, **tolerances), io.BytesIO(expected), 1 << 40)
    for start in range(0, len(got), chunk):
        assert comparison.feed(got[start : start + chunk])
    return comparison.verdict()


CASES = [
    ("exact", b"1 2\n3\n", b"1 2\r\n3", None),
    ("exact", b"1 2\n3\n", b"1  2\n3\n", "line 1: expected '1 2', got '1  2'"),
    ("exact", b"a\n\nb\n", b"a\n\nb\n\n\n", None),
    ("exact", b"a\n\nb\n", b"a\nb\n", "line 2: expected '', got 'b'"),
    ("exact", b"a\nb\n", b"a\n", "line 2: expected 'b', got the end of the output"),
    ("tokens", b"1 2\n3\n", b"1\n2   3  ", None),
    ("tokens", b"1 2\n3\n", b"1\n2 3 4", "line 2: expected the end of the output, got '4'"),
    ("tokens", b"1 2\n3\n", b"1\n2\n\n 4", "line 4: expected '3', got '4'"),
    ("tokens", b"", b"\n\n", None),
    ("case_insensitive", b"YES\nno\n", b"yes NO", None),
    ("case_insensitive", b"YES\n", b"yess", "line 1: expected 'YES', got 'yess'"),
    ("floats", b"0.333333\n", b"0.3333334", None),
    ("floats", b"0.333333\n", b"0.3334", "line 1: expected '0.333333', got '0.3334'"),
    ("floats", b"1000000\n", b"1000000.5", None),  # within rel_tol 1e-6
    ("floats", b"1\n", b"1_0", "line 1: expected '1', got '1_0'"),  # float() would take it
    ("floats", b"inf\n", b"1e999", "line 1: expected 'inf', got '1e999'"),  # numbers only
    ("floats", b"x 2.0\n", b"x 2", None),
]


@pytest.mark.parametrize(("name", "expected", "got", "verdict"), CASES)
def test_verdicts_and_the_first_difference(
    name: str, expected: bytes, got: bytes, verdict: str | None
) -> None:
    assert compare(name, expected, got) == verdict


@pytest.mark.parametrize("name", ["exact", "tokens", "case_insensitive", "floats"])
def test_any_chunking_gives_the_same_verdict(name: str) -> None:
    r = random.Random(7)
    words = [r.choice([b"1", b"22", b"3.5", b"ab", b"AB", b""]) for _ in range(3000)]
    expected = b"".join(w + r.choice([b" ", b"\n", b"\r\n", b"  "]) for w in words)
    wrong = bytearray(expected)
    wrong[len(wrong) * 2 // 3] = ord("9")
    for got in (expected, bytes(wrong)):
        verdicts = {compare(name, expected, got, chunk) for chunk in (1, 2, 5, 64, 4096, len(got) + 1)}
        assert len(verdicts) == 1, verdicts


@pytest.mark.parametrize("name", ["exact", "tokens"])
def test_a_huge_line_or_token_is_compared_in_bounded_memory(name: str) -> None:
    """40 MiB without a newline or a space: read in 64 KiB chunks, held at most in
    1 MiB pieces (on both sides), and a difference at its end still shows."""
    size = 40 * MIB
    expected = io.BytesIO(b"a" * size + b"\n")
    comparison = Comparison(CheckerSpec(name), expected, 1 << 40)
    chunk = b"a" * (64 * 1024)
    tracemalloc.start()
    try:
        for _ in range(size // len(chunk) - 1):
            comparison.feed(chunk)
        comparison.feed(b"a" * (len(chunk) - 1) + b"b")
        verdict = comparison.verdict()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert verdict is not None and "got 'aaaa" in verdict
    assert peak < 8 * MIB, f"peak {peak / MIB:.1f} MiB"


def test_past_the_limit_the_sink_stops_reading() -> None:
    comparison = Comparison(CheckerSpec("tokens"), io.BytesIO(b"1\n"), limit=100)
    assert comparison.feed(b"1" * 100)
    assert not comparison.feed(b"1")


def test_an_unknown_checker_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="exact, tokens, case_insensitive, floats"):
        CheckerSpec("fuzzy")
