from colors import hex_to_rgb


def test_six_digits():
    assert hex_to_rgb("#ff8000") == (255, 128, 0)
