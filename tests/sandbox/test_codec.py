"""Plain values across the boundary, and type-strict comparison in the parent."""

from __future__ import annotations

import math

import pytest

from assay.sandbox import values_equal
from assay.sandbox.harness import codec
from assay.sandbox.harness.frames import FrameBuffer, FrameError, encode_frame


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -7,
        2**80,
        -(2**70),
        1.5,
        -0.0,
        "héllo",
        b"\x00\xff",
        [1, [2, 3]],
        (1, "a"),
        {"a": 1},
        {1: "one", (2, 3): [4]},
        {1, 2},
        frozenset({"x"}),
        complex(1, -2),
        float("inf"),
        float("-inf"),
    ],
)
def test_round_trip_keeps_exact_types(value: object) -> None:
    decoded = codec.decode(codec.encode(value))
    assert type(decoded) is type(value)
    assert decoded == value


def test_nan_round_trips() -> None:
    assert math.isnan(codec.decode(codec.encode(float("nan"))))


def test_subclass_with_permissive_eq_becomes_its_base_value() -> None:
    class Liar(str):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = str.__hash__

        def __str__(self) -> str:
            return "expected"

    decoded = codec.decode(codec.encode(Liar("wrong")))
    assert type(decoded) is str and decoded == "wrong"


@pytest.mark.parametrize("value", [object(), (x for x in []), print, type])
def test_arbitrary_objects_are_refused(value: object) -> None:
    with pytest.raises(codec.UnsupportedValue):
        codec.encode(value)


def test_cycles_are_refused() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(codec.UnsupportedValue, match="nested"):
        codec.encode(cycle)


@pytest.mark.parametrize(
    "data",
    [
        {"$eval": "1"},
        {"a": 1, "b": 2},
        {"$dict": [[1]]},
        {"$int": 5},
        {"$bytes": "*"},
        {"$set": [[1]]},
    ],
)
def test_malformed_data_is_refused(data: object) -> None:
    with pytest.raises(codec.MalformedValue):
        codec.decode(data)


@pytest.mark.parametrize(
    "expected, actual, equal",
    [
        (4, 4, True),
        (4, 4.0, True),
        (0.1 + 0.2, 0.3, True),
        (4, "4", False),
        (1, True, False),
        (True, 1, False),
        (None, 0, False),
        ([1, 2], (1, 2), True),
        ({"a": [1]}, {"a": [1]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ({1: "x"}, {True: "x"}, False),
        ({1, 2}, {2, 1}, True),
        ({1}, [1], False),
        (float("nan"), float("nan"), True),
        ("abc", "abd", False),
        (1.0, 1.001, False),
        (b"x", "x", False),
        ([1, [2.0]], [1, [2]], True),
    ],
)
def test_values_equal_is_type_strict(expected: object, actual: object, equal: bool) -> None:
    assert values_equal(expected, actual) is equal


def test_values_equal_never_calls_foreign_eq() -> None:
    class Anything:
        def __eq__(self, other: object) -> bool:
            return True

    assert not values_equal(4, Anything())
    assert not values_equal(Anything(), 4)


def test_frames_split_and_join() -> None:
    data = encode_frame({"a": 1}) + encode_frame([1, 2])
    buffer = FrameBuffer()
    assert buffer.feed(data[:5]) == []
    assert buffer.feed(data[5:]) == [{"a": 1}, [1, 2]]


def test_oversized_frame_is_refused() -> None:
    with pytest.raises(FrameError, match="exceeds"):
        FrameBuffer(limit=10).feed(b"\x00\x00\x10\x00")


def test_item_budget_stops_small_texts_that_explode() -> None:
    with pytest.raises(codec.MalformedValue, match="more than 1000 items"):
        codec.decode([[] for _ in range(2000)], budget=1000)
    assert codec.decode([[] for _ in range(999)], budget=1000) == [[]] * 999


# -- float32: compared at the precision it has --------------------------------------------
def test_a_float32_equals_the_double_it_rounds_from_and_nothing_a_float32_step_away() -> None:
    third = codec.decode({"$float32": 0.33333334}, float32=True)
    assert type(third) is codec.Float32
    assert values_equal(1 / 3, third) and values_equal(third, 1 / 3)
    assert not values_equal(1 / 3, 0.33333334)  # the same digits as a double: no such slack
    nearby = codec.decode({"$float32": 0.33333337}, float32=True)  # the next float32 up
    assert not values_equal(1 / 3, nearby)
    assert values_equal(1 / 3, nearby, 1e-6)


def test_a_float32_off_by_more_than_the_tolerance_fails() -> None:
    rough = codec.decode([{"$float32": 0.3333}], float32=True)
    assert not values_equal([1 / 3], rough)
    assert values_equal([1 / 3], rough, 1e-3)


def test_an_expected_value_no_float32_can_hold_is_unequal_not_an_error() -> None:
    largest = codec.decode({"$float32": 3.4028234663852886e38}, float32=True)
    assert not values_equal(1e39, largest) and not values_equal(10**400, largest)
    assert values_equal(float("inf"), codec.decode({"$float": "inf"}, float32=True))


@pytest.mark.parametrize("body", ["nan", None, 1e39, [0.5], True])
def test_a_malformed_float32_is_refused(body: object) -> None:
    with pytest.raises(codec.MalformedValue):
        codec.decode({"$float32": body}, float32=True)


def test_a_float32_from_a_language_without_one_is_refused() -> None:
    """A Python or JavaScript process that tags its double a float32 would buy float32's
    looser comparison for it: the parent accepts the tag only from Go, Java and C++."""
    with pytest.raises(codec.MalformedValue, match="without a float32"):
        codec.decode({"$dict": [["x", [{"$float32": 0.33333334}]]]})


def test_a_float32_is_stored_and_encoded_as_a_plain_float() -> None:
    from assay.store._json import tag

    third = codec.decode({"$float32": 0.33333334}, float32=True)
    assert type(codec.decode(codec.encode(third))) is float and type(tag(third)) is float
    assert repr(third) == "0.33333334"
