"""Writes the repository-patch instances in this folder (run it after editing SPECS).

Sixteen small pure-Python projects of our own, each modelled on a small PyPI project
(slugify, humanize, semver, inflection...), each with a known bug injected. Per instance:
``repo/`` (the project at the buggy commit, with its visible tests), and ``instance.json``
with the hidden tests (``test_patch``), FAIL_TO_PASS, PASS_TO_PASS, a correct patch
(``patch``) and an incorrect one (``wrong_patch``). Patches are plain ``git diff`` style
unified diffs made with difflib.

    python bench/data/patches/make_instances.py
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name: (modelled on, module, buggy source, (fix old, fix new), (wrong old, wrong new),
#        visible tests, hidden tests, problem statement)
SPECS: dict[str, tuple[str, str, str, tuple[str, str], tuple[str, str], str, str, str]] = {
    "slugify": (
        "python-slugify",
        "slug",
        'import re\n\n\ndef slugify(text, sep="-"):\n    text = text.strip().lower()\n'
        '    text = re.sub(r"[^a-z0-9]", sep, text)\n    return text.strip(sep)\n',
        ('re.sub(r"[^a-z0-9]", sep, text)', 're.sub(r"[^a-z0-9]+", sep, text)'),
        ("text.strip(sep)", "text.replace(sep + sep, sep).strip(sep)"),
        'from slug import slugify\n\n\ndef test_simple():\n    assert slugify("Hello World") == "hello-world"\n\n\n'
        'def test_separator():\n    assert slugify("a b", sep="_") == "a_b"\n',
        'from slug import slugify\n\n\ndef test_collapses_runs():\n    assert slugify("Hello,   World!!") == "hello-world"\n\n\n'
        'def test_collapses_long_runs():\n    assert slugify("a - - - b") == "a-b"\n',
        "slugify('Hello,   World!!') gives 'hello----world': runs of separators should collapse to one.",
    ),
    "naturalsize": (
        "humanize",
        "sizes",
        'UNITS = ["B", "KiB", "MiB", "GiB"]\n\n\ndef naturalsize(count):\n    value = float(count)\n'
        "    for unit in UNITS:\n        if value <= 1024 or unit == UNITS[-1]:\n"
        '            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"\n        value /= 1024\n',
        ("if value <= 1024", "if value < 1024"),
        ("if value <= 1024", "if value <= 1023"),
        'from sizes import naturalsize\n\n\ndef test_bytes():\n    assert naturalsize(300) == "300 B"\n\n\n'
        'def test_kib():\n    assert naturalsize(3000) == "2.9 KiB"\n\n\n'
        'def test_between():\n    assert naturalsize(1023.5) == "1023 B"\n',
        'from sizes import naturalsize\n\n\ndef test_exactly_one_kib():\n    assert naturalsize(1024) == "1.0 KiB"\n\n\n'
        'def test_one_mib():\n    assert naturalsize(1024 * 1024) == "1.0 MiB"\n',
        "naturalsize(1024) says '1024 B'; it should be '1.0 KiB'.",
    ),
    "semver": (
        "semver",
        "versions",
        'def parse(text):\n    return tuple(text.split("."))\n\n\ndef compare(a, b):\n'
        "    left, right = parse(a), parse(b)\n    return (left > right) - (left < right)\n",
        ('tuple(text.split("."))', 'tuple(int(part) for part in text.split("."))'),
        ('tuple(text.split("."))', 'tuple(text.split("."))[::-1]'),
        'from versions import compare\n\n\ndef test_equal():\n    assert compare("1.2.3", "1.2.3") == 0\n\n\n'
        'def test_patch_order():\n    assert compare("1.2.3", "1.2.4") == -1\n',
        'from versions import compare\n\n\ndef test_numeric_minor():\n    assert compare("1.10.0", "1.9.0") == 1\n\n\n'
        'def test_numeric_patch():\n    assert compare("1.2.10", "1.2.9") == 1\n',
        'compare("1.10.0", "1.9.0") returns -1: parts are compared as text, not numbers.',
    ),
    "inflection": (
        "inflection",
        "inflect",
        'import re\n\n\ndef underscore(word):\n    word = re.sub(r"([a-z\\d])([A-Z])", r"\\1_\\2", word)\n'
        '    return word.replace("-", "_").lower()\n',
        (
            '    word = re.sub(r"([a-z\\d])([A-Z])", r"\\1_\\2", word)\n',
            '    word = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\\1_\\2", word)\n'
            '    word = re.sub(r"([a-z\\d])([A-Z])", r"\\1_\\2", word)\n',
        ),
        ('re.sub(r"([a-z\\d])([A-Z])", r"\\1_\\2", word)', 're.sub(r"([A-Z])", r"_\\1", word).lstrip("_")'),
        'from inflect import underscore\n\n\ndef test_camel():\n    assert underscore("DeviceType") == "device_type"\n\n\n'
        'def test_dashes():\n    assert underscore("a-b") == "a_b"\n',
        'from inflect import underscore\n\n\ndef test_acronym():\n    assert underscore("HTTPResponse") == "http_response"\n\n\n'
        'def test_acronym_inside():\n    assert underscore("ParseXMLFile") == "parse_xml_file"\n',
        'underscore("HTTPResponse") gives "httpresponse"; it should give "http_response".',
    ),
    "roman": (
        "roman",
        "numerals",
        'PAIRS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]\n\n\n'
        'def to_roman(number):\n    out = ""\n    for value, letters in PAIRS:\n'
        "        while number >= value:\n            out += letters\n            number -= value\n    return out\n",
        (
            'PAIRS = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]',
            'PAIRS = [\n    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),\n'
            '    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),\n]',
        ),
        ('(5, "V"), (1, "I")]', '(5, "V"), (4, "IV"), (1, "I")]'),
        'from numerals import to_roman\n\n\ndef test_small():\n    assert to_roman(3) == "III"\n\n\n'
        'def test_big():\n    assert to_roman(2023) == "MMXXIII"\n',
        'from numerals import to_roman\n\n\ndef test_four():\n    assert to_roman(4) == "IV"\n\n\n'
        'def test_subtractive():\n    assert to_roman(1994) == "MCMXCIV"\n',
        "to_roman(4) gives 'IIII' and to_roman(1994) 'MDCCCCLXXXXIIII': use subtractive notation.",
    ),
    "chunked": (
        "more-itertools",
        "chunks",
        "def chunked(iterable, size):\n    batch = []\n    for item in iterable:\n        batch.append(item)\n"
        "        if len(batch) == size:\n            yield batch\n            batch = []\n",
        ("            batch = []\n", "            batch = []\n    if batch:\n        yield batch\n"),
        ("            batch = []\n", "            batch = []\n    yield batch\n"),
        "from chunks import chunked\n\n\ndef test_even():\n    assert list(chunked([1, 2, 3, 4], 2)) == [[1, 2], [3, 4]]\n",
        "from chunks import chunked\n\n\ndef test_remainder():\n    assert list(chunked([1, 2, 3], 2)) == [[1, 2], [3]]\n\n\n"
        "def test_odd_tail():\n    assert list(chunked([1, 2, 3, 4, 5], 2)) == [[1, 2], [3, 4], [5]]\n",
        "chunked([1, 2, 3], 2) drops the last, partial chunk [3].",
    ),
    "ordinal": (
        "humanize",
        "ordinals",
        'def ordinal(number):\n    suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")\n    return f"{number}{suffix}"\n',
        (
            '    suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")\n',
            '    suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")\n'
            '    if number % 100 in (11, 12, 13):\n        suffix = "th"\n',
        ),
        (
            '    suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")\n',
            '    suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")\n    if number == 11:\n        suffix = "th"\n',
        ),
        'from ordinals import ordinal\n\n\ndef test_first():\n    assert ordinal(1) == "1st"\n\n\n'
        'def test_twenty_second():\n    assert ordinal(22) == "22nd"\n',
        'from ordinals import ordinal\n\n\ndef test_eleventh():\n    assert ordinal(11) == "11th"\n\n\n'
        'def test_hundred_twelfth():\n    assert ordinal(112) == "112th"\n',
        "ordinal(11) says '11st' and ordinal(112) '112nd'.",
    ),
    "webcolors": (
        "webcolors",
        "colors",
        'def hex_to_rgb(value):\n    value = value.lstrip("#")\n'
        "    return tuple(int(value[i : i + 2], 16) for i in (0, 2, 4))\n",
        (
            '    value = value.lstrip("#")\n',
            '    value = value.lstrip("#")\n    if len(value) == 3:\n        value = "".join(c * 2 for c in value)\n',
        ),
        (
            '    value = value.lstrip("#")\n',
            '    value = value.lstrip("#")\n    if len(value) == 3:\n        value = value * 2\n',
        ),
        'from colors import hex_to_rgb\n\n\ndef test_six_digits():\n    assert hex_to_rgb("#ff8000") == (255, 128, 0)\n',
        'from colors import hex_to_rgb\n\n\ndef test_shorthand():\n    assert hex_to_rgb("#abc") == (170, 187, 204)\n\n\n'
        'def test_shorthand_white():\n    assert hex_to_rgb("fff") == (255, 255, 255)\n',
        'hex_to_rgb("#abc") fails: three-digit shorthand colours are not expanded.',
    ),
    "deepmerge": (
        "deepmerge",
        "merging",
        "def merge(base, extra):\n    result = dict(base)\n    for key, value in extra.items():\n        result[key] = value\n    return result\n",
        (
            "        result[key] = value\n",
            "        if isinstance(value, dict) and isinstance(result.get(key), dict):\n"
            "            value = merge(result[key], value)\n        result[key] = value\n",
        ),
        (
            "        result[key] = value\n",
            "        if isinstance(value, dict):\n            result.update(value)\n        else:\n            result[key] = value\n",
        ),
        'from merging import merge\n\n\ndef test_flat():\n    assert merge({"a": 1}, {"b": 2}) == {"a": 1, "b": 2}\n\n\n'
        'def test_override():\n    assert merge({"a": 1}, {"a": 2}) == {"a": 2}\n',
        'from merging import merge\n\n\ndef test_nested():\n    assert merge({"x": {"a": 1}}, {"x": {"b": 2}}) == {"x": {"a": 1, "b": 2}}\n\n\n'
        'def test_deeper():\n    assert merge({"x": {"y": {"a": 1}}}, {"x": {"y": {"b": 2}}}) == {"x": {"y": {"a": 1, "b": 2}}}\n',
        "merge({'x': {'a': 1}}, {'x': {'b': 2}}) loses 'a': nested dicts should merge.",
    ),
    "levenshtein": (
        "textdistance",
        "distance",
        "def levenshtein(a, b):\n    previous = list(range(len(b) + 1))\n    for i, left in enumerate(a, 1):\n"
        "        current = [i]\n        for j, right in enumerate(b, 1):\n"
        "            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + 1))\n"
        "        previous = current\n    return previous[-1]\n",
        ("previous[j - 1] + 1))", "previous[j - 1] + (left != right)))"),
        ("previous[j - 1] + 1))", "previous[j - 1] + 2 * (left != right)))"),
        'from distance import levenshtein\n\n\ndef test_from_empty():\n    assert levenshtein("", "abc") == 3\n\n\n'
        'def test_to_empty():\n    assert levenshtein("ab", "") == 2\n',
        'from distance import levenshtein\n\n\ndef test_kitten():\n    assert levenshtein("kitten", "sitting") == 3\n\n\n'
        'def test_same():\n    assert levenshtein("abc", "abc") == 0\n',
        "levenshtein('abc', 'abc') is 3: equal characters are counted as substitutions.",
    ),
    "durations": (
        "pytimeparse",
        "durations",
        'import re\n\nUNITS = {"h": 3600, "m": 60, "s": 1}\n\n\ndef parse(text):\n'
        '    match = re.match(r"(\\d+)([hms])", text)\n    if not match:\n        raise ValueError(text)\n'
        "    return int(match.group(1)) * UNITS[match.group(2)]\n",
        (
            '    match = re.match(r"(\\d+)([hms])", text)\n    if not match:\n        raise ValueError(text)\n'
            "    return int(match.group(1)) * UNITS[match.group(2)]\n",
            '    parts = re.findall(r"(\\d+)([hms])", text)\n    if not parts:\n        raise ValueError(text)\n'
            "    return sum(int(n) * UNITS[u] for n, u in parts)\n",
        ),
        (
            "    return int(match.group(1)) * UNITS[match.group(2)]\n",
            '    return int(match.group(1)) * UNITS[match.group(2)] + 30 * 60 * ("m" in text[2:])\n',
        ),
        'import pytest\nfrom durations import parse\n\n\ndef test_seconds():\n    assert parse("45s") == 45\n\n\n'
        'def test_invalid():\n    with pytest.raises(ValueError):\n        parse("soon")\n',
        'from durations import parse\n\n\ndef test_hours_and_minutes():\n    assert parse("1h30m") == 5400\n\n\n'
        'def test_three_units():\n    assert parse("2h5m7s") == 7507\n',
        'parse("1h30m") returns 3600: only the first unit is read.',
    ),
    "pluralize": (
        "inflect",
        "plurals",
        'def pluralize(word):\n    if word.endswith(("s", "x", "ch", "sh")):\n        return word + "es"\n    return word + "s"\n',
        (
            '    return word + "s"\n',
            '    if word.endswith("y") and word[-2:-1] not in "aeiou":\n        return word[:-1] + "ies"\n    return word + "s"\n',
        ),
        (
            '    return word + "s"\n',
            '    if word.endswith("y"):\n        return word[:-1] + "ies"\n    return word + "s"\n',
        ),
        'from plurals import pluralize\n\n\ndef test_plain():\n    assert pluralize("cat") == "cats"\n\n\n'
        'def test_box():\n    assert pluralize("box") == "boxes"\n\n\n'
        'def test_day():\n    assert pluralize("day") == "days"\n',
        'from plurals import pluralize\n\n\ndef test_city():\n    assert pluralize("city") == "cities"\n\n\n'
        'def test_fly():\n    assert pluralize("fly") == "flies"\n',
        'pluralize("city") gives "citys".',
    ),
    "textwrap": (
        "textwrap3",
        "wrapping",
        'def wrap(text, width):\n    lines, line = [], ""\n    for word in text.split():\n'
        "        if line and len(line) + len(word) > width:\n            lines.append(line)\n            line = word\n"
        '        else:\n            line = f"{line} {word}" if line else word\n'
        "    if line:\n        lines.append(line)\n    return lines\n",
        ("len(line) + len(word) > width", "len(line) + 1 + len(word) > width"),
        ("len(line) + len(word) > width", "len(line) + len(word) >= width + 2"),
        'from wrapping import wrap\n\n\ndef test_fits():\n    assert wrap("a b c", 10) == ["a b c"]\n',
        'from wrapping import wrap\n\n\ndef test_never_longer_than_width():\n    assert all(len(x) <= 5 for x in wrap("aaa bb", 5))\n\n\n'
        'def test_exact():\n    assert wrap("ab cd", 4) == ["ab", "cd"]\n',
        'wrap("ab cd", 4) returns ["ab cd"], five characters: lines may exceed the width.',
    ),
    "base62": (
        "shortuuid",
        "base62",
        'ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"\n\n\n'
        'def encode(number):\n    out = ""\n    while number:\n        number, digit = divmod(number, 62)\n'
        "        out = ALPHABET[digit] + out\n    return out\n\n\n"
        "def decode(text):\n    number = 0\n    for char in text:\n        number = number * 62 + ALPHABET.index(char)\n    return number\n",
        ("    return out\n", '    return out or "0"\n'),
        ('    out = ""\n', '    out = "0"\n'),
        "from base62 import decode, encode\n\n\ndef test_round_trip():\n    assert decode(encode(123456789)) == 123456789\n\n\n"
        'def test_known():\n    assert encode(61) == "Z"\n',
        'from base62 import decode, encode\n\n\ndef test_zero():\n    assert encode(0) == "0"\n\n\n'
        'def test_zero_round_trip():\n    assert encode(0) != "" and decode(encode(0)) == 0\n',
        'encode(0) returns "", which decodes to nothing.',
    ),
    "iniparse": (
        "configobj",
        "ini",
        "def parse(text):\n    values = {}\n    for raw in text.splitlines():\n        line = raw.strip()\n"
        '        if not line or line.startswith((";", "#")):\n            continue\n'
        '        key, _, value = line.partition("=")\n        values[key.strip()] = value.strip()\n    return values\n',
        (
            '        key, _, value = line.partition("=")\n',
            '        key, _, value = line.partition("=")\n        value = value.split(" ;", 1)[0]\n',
        ),
        (
            '        key, _, value = line.partition("=")\n',
            '        key, _, value = line.partition("=")\n        value = value.split(";", 1)[0]\n',
        ),
        'from ini import parse\n\n\ndef test_pairs():\n    assert parse("a = 1\\nb=2") == {"a": "1", "b": "2"}\n\n\n'
        'def test_semicolon_in_value():\n    assert parse("url = a;b") == {"url": "a;b"}\n',
        'from ini import parse\n\n\ndef test_inline_comment():\n    assert parse("a = 1 ; the first") == {"a": "1"}\n',
        "parse('a = 1 ; the first') keeps the comment in the value.",
    ),
    "statistics": (
        "statistics (backport)",
        "stats",
        "def median(values):\n    ordered = sorted(values)\n    middle = len(ordered) // 2\n    return ordered[middle]\n",
        (
            "    return ordered[middle]\n",
            "    if len(ordered) % 2:\n        return ordered[middle]\n    return (ordered[middle - 1] + ordered[middle]) / 2\n",
        ),
        ("    return ordered[middle]\n", "    return (ordered[middle - 1] + ordered[middle]) / 2\n"),
        "from stats import median\n\n\ndef test_odd():\n    assert median([3, 1, 2]) == 2\n\n\n"
        "def test_single():\n    assert median([7]) == 7\n",
        "from stats import median\n\n\ndef test_even():\n    assert median([4, 1, 3, 2]) == 2.5\n\n\n"
        "def test_pair():\n    assert median([1, 2]) == 1.5\n",
        "median([4, 1, 3, 2]) returns 3; with an even count it should average the middle two.",
    ),
}


def diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def new_file(path: str, text: str) -> str:
    body = "".join("+" + line for line in text.splitlines(keepends=True))
    count = len(text.splitlines())
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{count} @@\n{body}"


def test_ids(path: str, source: str) -> list[str]:
    return [
        f"{path}::{line[4:].split('(')[0]}" for line in source.splitlines() if line.startswith("def test_")
    ]


def write(name: str, spec: tuple[str, str, str, tuple[str, str], tuple[str, str], str, str, str]) -> None:
    modelled, module, buggy, fix, wrong, visible, hidden, problem = spec
    for old, _ in (fix, wrong):
        assert buggy.count(old) == 1, (name, old)
    folder = HERE / name
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "repo" / "tests").mkdir(parents=True)
    source = f"{module}.py"
    (folder / "repo" / source).write_text(buggy)
    (folder / "repo" / "tests" / f"test_{module}.py").write_text(visible)
    hidden_path = f"tests/test_{module}_hidden.py"
    instance = {
        "instance_id": f"assay__{name}-1",
        "modelled_on": modelled,
        "problem_statement": problem,
        "FAIL_TO_PASS": test_ids(hidden_path, hidden),
        "PASS_TO_PASS": test_ids(f"tests/test_{module}.py", visible),
        "test_patch": new_file(hidden_path, hidden),
        "patch": diff(source, buggy, buggy.replace(*fix)),
        "wrong_patch": diff(source, buggy, buggy.replace(*wrong)),
    }
    (folder / "instance.json").write_text(json.dumps(instance, indent=2) + "\n")


if __name__ == "__main__":
    for name, spec in SPECS.items():
        write(name, spec)
    print(f"wrote {len(SPECS)} instances in {HERE}")
