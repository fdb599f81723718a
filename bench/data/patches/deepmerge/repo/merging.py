def merge(base, extra):
    result = dict(base)
    for key, value in extra.items():
        result[key] = value
    return result
