from slug import slugify


def test_simple():
    assert slugify("Hello World") == "hello-world"


def test_separator():
    assert slugify("a b", sep="_") == "a_b"
