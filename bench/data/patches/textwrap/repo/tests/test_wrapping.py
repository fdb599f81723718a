from wrapping import wrap


def test_fits():
    assert wrap("a b c", 10) == ["a b c"]
