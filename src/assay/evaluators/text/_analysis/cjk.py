"""Segmenting text written without spaces: Chinese with jieba, Japanese by script runs.

jieba's dictionary ships in its wheel (no download). It is loaded once per process, on
first use, quietly: jieba logs its loading to stderr and may import the deprecated
``pkg_resources``.
"""

from __future__ import annotations

import logging
import threading
import warnings
from typing import Any

import regex

from assay.errors import require_extra

_jieba: Any = None
_lock = threading.Lock()

# Japanese: a hiragana run is mostly particles and inflection, a katakana run a loanword
_KANA_RUN = regex.compile(r"(?P<hira>[\p{Hiragana}\u30fc]+)|(?P<kata>[\p{Katakana}\u30fc\uff70]+)")
# Korean case particles and endings, longest first, stripped from the end of a word
_GRAPHEME = regex.compile(r"\X")
_KOREAN_PARTICLES = tuple(
    sorted(
        (
            "은 는 이 가 을 를 의 에 에서 에게 께 께서 으로 로 와 과 도 만 까지 부터 보다 처럼 "
            "이다 입니다 입니까 인가요 이에요 예요 이란 란 이라는 라는 이며 이나 나"
        ).split(),
        key=len,
        reverse=True,
    )
)


def jieba_module() -> Any:
    global _jieba
    if _jieba is None:
        with _lock:
            if _jieba is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    jieba = require_extra("jieba", "text", feature="Chinese word segmentation")

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba = jieba
    return _jieba


def segment_chinese(run: str) -> list[str]:
    """Words of a run of Han characters (jieba's default mode, HMM for unknown words)."""
    return [word for word in jieba_module().lcut(run, HMM=True) if word.strip()]


def split_kana(run: str) -> list[tuple[str, str]]:
    """``("hira"|"kata", text)`` pieces of a run of kana."""
    return [(match.lastgroup or "hira", match.group()) for match in _KANA_RUN.finditer(run)]


def korean_stem(word: str) -> str:
    """``"학교에서"`` -> ``"학교"``: the word without a trailing particle (keeps >= 1 syllable)."""
    for particle in _KOREAN_PARTICLES:
        if word.endswith(particle) and len(word) > len(particle):
            return word[: -len(particle)]
    return word


def grapheme_bigrams(run: str) -> list[str]:
    """Scripts with no spaces and no segmenter here (Thai, Lao, Khmer, Myanmar): pairs of
    user-perceived characters, so a vowel sign stays with its consonant."""
    clusters = _GRAPHEME.findall(run)
    if len(clusters) < 2:
        return ["".join(clusters)]
    return [clusters[i] + clusters[i + 1] for i in range(len(clusters) - 1)]
