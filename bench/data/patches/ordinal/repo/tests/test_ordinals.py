from ordinals import ordinal


def test_first():
    assert ordinal(1) == "1st"


def test_twenty_second():
    assert ordinal(22) == "22nd"
