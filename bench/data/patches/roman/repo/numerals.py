PAIRS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]


def to_roman(number):
    out = ""
    for value, letters in PAIRS:
        while number >= value:
            out += letters
            number -= value
    return out
