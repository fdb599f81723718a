from ini import parse


def test_pairs():
    assert parse("a = 1\nb=2") == {"a": "1", "b": "2"}


def test_semicolon_in_value():
    assert parse("url = a;b") == {"url": "a;b"}
