"""Key elements of a text: content words as lemmas, Chinese words, Japanese and Korean stems.

``_text_tokens`` splits the text into script runs; each run goes to the analysis its
script needs. English words are lemmatized (lemminflect), Chinese runs are
segmented (jieba), Japanese runs are split by script, Korean words lose their particles.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import regex

from assay.evaluators.text._analysis.cjk import grapheme_bigrams, korean_stem, segment_chinese, split_kana
from assay.evaluators.text._analysis.english import analyse_english
from assay.evaluators.text._analysis.function_words import (
    ENGLISH_FUNCTION_PHRASES,
    KOREAN_FUNCTION_WORDS,
    is_chinese_function_word,
    is_english_function_word,
)
from assay.evaluators.text._analysis.normalize import fold, prepare, split_identifier
from assay.evaluators.text._analysis.tokens import is_japanese, iter_runs

_ASCII_LETTERS = regex.compile(r"[a-z]+")


@dataclass(frozen=True)
class Element:
    """A required (or offered) element; ``forms`` are the strings it may be matched by."""

    text: str
    forms: frozenset[str]
    script: str  # "latin" (any spaced script), "han", "kana", "hangul", "number", "bigram"


@dataclass
class TextElements:
    elements: list[Element] = field(default_factory=list)
    han_runs: list[str] = field(default_factory=list)  # for segmentation-free matching


def extract_elements(text: str, *, include_function_words: bool = False) -> TextElements:
    """The deduplicated elements of ``text``, in order of first appearance."""
    text = prepare(text)
    if not include_function_words:
        text = ENGLISH_FUNCTION_PHRASES.sub(" ", text)
    japanese = is_japanese(text)
    found = TextElements()
    seen: set[str] = set()
    for kind, token in iter_runs(text):
        if kind == "han":
            found.han_runs.append(token)
        for element in _analyse(kind, token, japanese, include_function_words):
            if element.text not in seen:
                seen.add(element.text)
                found.elements.append(element)
    return found


def _analyse(kind: str, token: str, japanese: bool, keep_function: bool) -> list[Element]:
    if kind == "han":
        if japanese:
            return [_plain(token, "han")]
        return [
            _plain(word, "han")
            for word in segment_chinese(token)
            if keep_function or not is_chinese_function_word(word)
        ]
    if kind == "kana":
        return [
            _plain(piece, "kana") for script, piece in split_kana(token) if keep_function or script == "kata"
        ]
    if kind == "hangul":
        stem = korean_stem(token)
        if not keep_function and stem in KOREAN_FUNCTION_WORDS:
            return []
        return [Element(stem, frozenset({stem, token}), "hangul")]
    if kind == "nospace":
        return [_plain(gram, "bigram") for gram in grapheme_bigrams(token)]
    if kind == "number":
        return [_plain(token.replace(",", ""), "number")]
    return _words(token, keep_function)


def _plain(text: str, script: str) -> Element:
    return Element(text, frozenset({text}), script)


def _words(token: str, keep_function: bool) -> list[Element]:
    if "-" in token:
        compound = _compound(token, keep_function)
        return [compound] if compound is not None else []
    elements = []
    for part in split_identifier(token):
        element = _word(fold(part), keep_function)
        if element is not None:
            elements.append(element)
    return elements


def _word(word: str, keep_function: bool) -> Element | None:
    if word.endswith("'s"):
        word = word[:-2]
    if not word:
        return None
    if _ASCII_LETTERS.fullmatch(word) is None:  # contractions, other scripts, "mp3"
        if not keep_function and is_english_function_word(word, frozenset()):
            return None
        return _plain(word, "latin")
    analysis = analyse_english(word)
    if not keep_function and is_english_function_word(word, analysis.lemmas):
        return None
    return Element(analysis.canonical, analysis.lemmas | {word, analysis.canonical}, "latin")


def _compound(token: str, keep_function: bool) -> Element | None:
    """``"non-renewable"`` stays one element, also matched by ``"nonrenewable"``."""
    parts = [fold(part) for part in token.split("-") if part]
    if not keep_function and all(is_english_function_word(p, frozenset()) for p in parts):
        return None
    last = parts[-1]
    if _ASCII_LETTERS.fullmatch(last):
        parts[-1] = analyse_english(last).canonical
    text = "-".join(parts)
    return Element(text, frozenset({text, "".join(parts), fold(token)}), "latin")
