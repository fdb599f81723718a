from sizes import naturalsize


def test_bytes():
    assert naturalsize(300) == "300 B"


def test_kib():
    assert naturalsize(3000) == "2.9 KiB"


def test_between():
    assert naturalsize(1023.5) == "1023 B"
