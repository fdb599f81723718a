import pytest
from durations import parse


def test_seconds():
    assert parse("45s") == 45


def test_invalid():
    with pytest.raises(ValueError):
        parse("soon")
