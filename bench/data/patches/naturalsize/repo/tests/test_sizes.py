from sizes import naturalsize


def test_bytes():
    assert naturalsize(300) == "300 B"


def test_kib():
    assert naturalsize(3000) == "2.9 KiB"
