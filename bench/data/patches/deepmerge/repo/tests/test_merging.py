from merging import merge


def test_flat():
    assert merge({"a": 1}, {"b": 2}) == {"a": 1, "b": 2}


def test_override():
    assert merge({"a": 1}, {"a": 2}) == {"a": 2}
