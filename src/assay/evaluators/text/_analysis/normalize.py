"""Character-level normalization shared by the text scorers.

Identifiers are split *before* lowercasing (the reference lowercases first, so its
camelCase split never fires); diacritics are stripped the way the reference does it
(the combining marks U+0300-U+036F only, so Devanagari vowel signs or kana voicing marks
survive), then the text is case-folded.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import regex

_COMBINING_DIACRITICS = regex.compile("[\u0300-\u036f]+")
# a boundary inside an identifier: "getUser" -> get|User, "base64Encode" -> base64|Encode,
# "HTTPServer" -> HTTP|Server; no boundary in "iPhone" (one lowercase letter) or "3D"
_CAMEL_BOUNDARY = regex.compile(r"(?<=\p{Ll}\p{Ll}|\p{L}\p{N}+)(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'", "\u2018": "'"})


def prepare(text: str) -> str:
    """NFKC (full-width Latin and digits become ASCII) and one apostrophe character."""
    return unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)


@lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """Strip Latin/Greek/Cyrillic diacritics and case-fold: ``"Café"`` -> ``"cafe"``."""
    if word.isascii():
        return word.lower()
    stripped = _COMBINING_DIACRITICS.sub("", unicodedata.normalize("NFD", word))
    return unicodedata.normalize("NFC", stripped).casefold()


def split_identifier(token: str) -> list[str]:
    """``"getUserName"`` -> ``["get", "User", "Name"]``; ``"user_id"`` -> ``["user", "id"]``."""
    parts: list[str] = []
    for piece in token.split("_"):
        if piece:
            parts.extend(part for part in _CAMEL_BOUNDARY.split(piece) if part)
    return parts
