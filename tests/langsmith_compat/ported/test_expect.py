"""Port of langsmith-sdk python/tests/unit_tests/test_expect.py, in our words. Upstream
patches the client ``expect`` sends feedback to; outside a marked test assay's ``expect``
is a plain assertion that records nothing, so nothing needs patching."""

from __future__ import annotations

from assay import expect


def _is_none(x: object) -> bool:
    return x is None


def test_expect_explicit_none() -> None:
    expect(None).against(_is_none)
    expect(None).to_be_none()
    expect.score(1).to_equal(1)
    expect.score(1).to_be_less_than(2)
    expect.score(1).to_be_greater_than(0)
    expect.score(1).to_be_between(0, 2)
    expect.score(1).to_be_approximately(1, 2)
    expect({1, 2}).to_contain(1)
