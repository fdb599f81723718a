import re


def slugify(text, sep="-"):
    text = text.strip().lower()
    text = re.sub(r"[^a-z0-9]", sep, text)
    return text.strip(sep)
