from stats import median


def test_odd():
    assert median([3, 1, 2]) == 2


def test_single():
    assert median([7]) == 7
