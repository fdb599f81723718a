from inflect import underscore


def test_camel():
    assert underscore("DeviceType") == "device_type"


def test_dashes():
    assert underscore("a-b") == "a_b"
