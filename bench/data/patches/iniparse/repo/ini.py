def parse(text):
    values = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values
