from versions import compare


def test_equal():
    assert compare("1.2.3", "1.2.3") == 0


def test_patch_order():
    assert compare("1.2.3", "1.2.4") == -1
