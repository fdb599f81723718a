from distance import levenshtein


def test_from_empty():
    assert levenshtein("", "abc") == 3


def test_to_empty():
    assert levenshtein("ab", "") == 2
