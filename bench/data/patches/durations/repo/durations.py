import re

UNITS = {"h": 3600, "m": 60, "s": 1}


def parse(text):
    match = re.match(r"(\d+)([hms])", text)
    if not match:
        raise ValueError(text)
    return int(match.group(1)) * UNITS[match.group(2)]
