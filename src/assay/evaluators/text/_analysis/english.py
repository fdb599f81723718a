"""English lemmas from lemminflect (its lexicon ships in the wheel; nothing is downloaded).

Without a tagger a word's part of speech is unknown, so a word keeps every lemma it may
have as a matching form ("analyses" -> analysis, analyse) and one canonical lemma for
display: verbs become infinitives ("explained" -> explain, "ran" -> run), nouns singular.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache

import lemminflect

# a verb reading is preferred for display (verbs shown as infinitives), then a noun
_CANONICAL_ORDER = ("VERB", "NOUN", "ADJ", "ADV", "PROPN")
# comparatives map to other words ("better" -> good); keep such lemmas only when they
# share a stem with the word, so "best practice" is not covered by "good practice"
_STEM_CHECKED = frozenset({"ADJ", "ADV"})


@dataclass(frozen=True)
class EnglishWord:
    canonical: str
    lemmas: frozenset[str]


_loaded = False
_load_lock = threading.Lock()


def _load_lexicon() -> None:
    """lemminflect reads its lexicon on first use; do it once, not in two threads at once."""
    global _loaded
    with _load_lock:
        if not _loaded:
            lemminflect.getAllLemmas("warm")
            lemminflect.getAllLemmasOOV("warms", "NOUN")
            _loaded = True


@lru_cache(maxsize=65536)
def analyse_english(word: str) -> EnglishWord:
    """``word`` is lowercase ASCII letters."""
    if not _loaded:
        _load_lexicon()
    readings = lemminflect.getAllLemmas(word)
    if not readings and word.endswith("s") and len(word) > 4 and not word.endswith("ss"):
        # an unknown plural ("microservices"): the rule-based noun lemmatizer
        readings = lemminflect.getAllLemmasOOV(word, "NOUN")
    kept = {
        pos: [lemma.lower() for lemma in found if pos not in _STEM_CHECKED or lemma[:3] == word[:3]]
        for pos, found in readings.items()
    }
    lemmas = frozenset(lemma for found in kept.values() for lemma in found)
    return EnglishWord(canonical=_canonical(word, kept), lemmas=lemmas)


def _canonical(word: str, readings: dict[str, list[str]]) -> str:
    for pos in _CANONICAL_ORDER:
        found = readings.get(pos)
        if found and found[0] != word:
            return found[0]
    return word
