"""Splitting text into script runs: words of spaced scripts, numbers, and runs of Han, kana,
Hangul or Thai-like scripts, each of which needs its own segmentation."""

from __future__ import annotations

from collections.abc import Iterator

import regex

from assay.evaluators.text._analysis.cjk import grapheme_bigrams, segment_chinese, split_kana
from assay.evaluators.text._analysis.normalize import fold, prepare

_NO_SPACE_SCRIPTS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
_WORD = rf"[[\p{{L}}\p{{M}}\p{{N}}_]--[{_NO_SPACE_SCRIPTS}]]+"
_RUNS = regex.compile(
    rf"""
    (?P<han>[\p{{Han}}\u3005\u3006\u3007]+)
  | (?P<kana>[\p{{Hiragana}}\p{{Katakana}}\u30fc\uff70]+)
  | (?P<hangul>\p{{Hangul}}+)
  | (?P<nospace>[\p{{Thai}}\p{{Lao}}\p{{Khmer}}\p{{Myanmar}}]+)
  | (?P<number>\p{{N}}+(?:[.,]\p{{N}}+)*(?![\p{{L}}\p{{N}}_]))
  | (?P<word>{_WORD}(?:['-]{_WORD})*)
    """,
    regex.VERBOSE | regex.V1,
)
_HAS_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")


def is_japanese(text: str) -> bool:
    """Kana anywhere means the Han runs are Japanese kanji, not Chinese."""
    return _HAS_KANA.search(text) is not None


def iter_runs(text: str) -> Iterator[tuple[str, str]]:
    """``(kind, token)`` for each run of ``text``; kind is a group name of ``_RUNS``."""
    for match in _RUNS.finditer(text):
        yield match.lastgroup or "word", match.group()


def word_tokens(text: str) -> list[str]:
    """Every word of ``text``, folded (no lemmas, nothing dropped): for n-gram metrics.

    Chinese is segmented by jieba, Japanese split into script runs, Thai-like scripts into
    grapheme pairs.
    """
    text = prepare(text)
    japanese = is_japanese(text)
    tokens: list[str] = []
    for kind, token in iter_runs(text):
        if kind == "han" and not japanese:
            tokens.extend(segment_chinese(token))
        elif kind == "kana":
            tokens.extend(piece for _, piece in split_kana(token))
        elif kind == "nospace":
            tokens.extend(grapheme_bigrams(token))
        else:
            tokens.append(fold(token))
    return tokens
