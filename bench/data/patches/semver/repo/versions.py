def parse(text):
    return tuple(text.split("."))


def compare(a, b):
    left, right = parse(a), parse(b)
    return (left > right) - (left < right)
