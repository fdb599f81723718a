from numerals import to_roman


def test_small():
    assert to_roman(3) == "III"


def test_big():
    assert to_roman(2023) == "MMXXIII"
