from base62 import decode, encode


def test_round_trip():
    assert decode(encode(123456789)) == 123456789


def test_known():
    assert encode(61) == "Z"
