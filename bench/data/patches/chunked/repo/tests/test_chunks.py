from chunks import chunked


def test_even():
    assert list(chunked([1, 2, 3, 4], 2)) == [[1, 2], [3, 4]]
