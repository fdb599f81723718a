from plurals import pluralize


def test_plain():
    assert pluralize("cat") == "cats"


def test_box():
    assert pluralize("box") == "boxes"


def test_day():
    assert pluralize("day") == "days"
