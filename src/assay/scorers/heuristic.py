"""Mastra's other heuristic scorers: content similarity, keyword coverage, textual
difference and tone. Each compares the input (or a reference tone) with the output and needs
no model.

Where we differ from the reference, and why:
- keyword coverage matches lemmas ("employees" covers "employee") and works on Chinese;
- textual difference counts changed word spans (the reference counts unmatched words);
- tone uses VADER (compound score in [-1, 1]) instead of AFINN's per-word average, so the
  reference-tone score is ``1 - |difference| / 2`` and stays within [0, 1].
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from typing import Any

from assay.errors import require_extra

try:
    from rapidfuzz.distance import Indel, Levenshtein
except ImportError:
    require_extra("rapidfuzz", "text", feature="the heuristic scorers")
    raise

from assay.evaluators.text._analysis.elements import TextElements, extract_elements
from assay.evaluators.text._analysis.match import CoverageIndex
from assay.scorers._base import Scorer, ScorerResult, TextLike, to_text

__all__ = [
    "ContentSimilarityScorer",
    "KeywordCoverageScorer",
    "TextualDifferenceScorer",
    "ToneScorer",
    "changed_spans",
    "create_content_similarity_scorer",
    "create_keyword_coverage_scorer",
    "create_textual_difference_scorer",
    "create_tone_scorer",
    "dice_bigrams",
    "sentiment",
]


_WHITESPACE = re.compile(r"\s+")
_SENTENCE = re.compile(r"[^.!?。！？]+[.!?。！？]+")


class ContentSimilarityScorer(Scorer):
    """Dice coefficient of character bigrams (the reference's ``string-similarity``)."""

    def __init__(
        self,
        *,
        ignore_case: bool = True,
        ignore_whitespace: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name or "content_similarity", **kwargs)
        self.ignore_case = ignore_case
        self.ignore_whitespace = ignore_whitespace

    def _run(self, input: TextLike, output: TextLike) -> ScorerResult:
        processed_input, processed_output = self._prepare(input), self._prepare(output)
        if self.ignore_whitespace:
            score = dice_bigrams(_WHITESPACE.sub("", processed_input), _WHITESPACE.sub("", processed_output))
        else:
            score = dice_bigrams(processed_input, processed_output)
        return ScorerResult(
            score=score,
            preprocess_step_result={
                "processed_input": processed_input,
                "processed_output": processed_output,
            },
        )

    def _prepare(self, value: TextLike) -> str:
        text = to_text(value)
        if self.ignore_case:
            text = text.casefold()
        if self.ignore_whitespace:
            text = _WHITESPACE.sub(" ", text).strip()
        return text


def dice_bigrams(first: str, second: str) -> float:
    """2 * |shared bigrams| / (|bigrams of first| + |bigrams of second|), with multiplicity."""
    if first == second:
        return 1.0
    if len(first) < 2 or len(second) < 2:
        return 0.0
    first_bigrams = Counter(first[i : i + 2] for i in range(len(first) - 1))
    second_bigrams = Counter(second[i : i + 2] for i in range(len(second) - 1))
    shared = sum((first_bigrams & second_bigrams).values())
    return 2.0 * shared / (len(first) + len(second) - 2)


class KeywordCoverageScorer(Scorer):
    """The share of the input's keywords (content lemmas, no numbers) found in the output."""

    def __init__(self, *, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name or "keyword_coverage", **kwargs)

    def _run(self, input: TextLike, output: TextLike) -> ScorerResult:
        reference = _keywords(to_text(input))
        response = _keywords(to_text(output))
        index = CoverageIndex(response)
        matched: list[str] = []
        missing: list[str] = []
        for element in reference.elements:
            (matched if index.covers_exactly(element) else missing).append(element.text)
        total = len(reference.elements)
        reason = f"{len(matched)} of {total} keywords found" if total else "the input has no keywords"
        if missing:
            reason += "; missing: " + ", ".join(missing)
        return ScorerResult(
            score=len(matched) / total if total else 1.0,
            reason=reason,
            preprocess_step_result={
                "reference_keywords": [e.text for e in reference.elements],
                "response_keywords": [e.text for e in response.elements],
            },
            analyze_step_result={
                "total_keywords": total,
                "matched_keywords": len(matched),
                "missing_keywords": missing,
            },
        )


def _keywords(text: str) -> TextElements:
    found = extract_elements(text)
    found.elements = [e for e in found.elements if e.script != "number"]
    return found


class TextualDifferenceScorer(Scorer):
    """How alike input and output are: 2 * LCS / (total length), in [0, 1]."""

    def __init__(self, *, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name or "textual_difference", **kwargs)

    def _run(self, input: TextLike, output: TextLike) -> ScorerResult:
        first, second = to_text(input), to_text(output)
        ratio = Indel.normalized_similarity(first, second)
        longest = max(len(first), len(second))
        length_diff = abs(len(first) - len(second)) / longest if longest else 0.0
        changes = changed_spans(first.split(), second.split())
        return ScorerResult(
            score=ratio,
            preprocess_step_result={
                "ratio": ratio,
                "confidence": 1.0 - length_diff,
                "changes": changes,
                "length_diff": length_diff,
            },
        )


def changed_spans(first: list[str], second: list[str]) -> int:
    """How many places differ: runs of replaced, inserted or deleted words, each counted once."""
    spans, in_change = 0, False
    for op in Levenshtein.opcodes(first, second):
        changed = op.tag != "equal"
        spans += changed and not in_change
        in_change = changed
    return spans


class ToneScorer(Scorer):
    """Sentiment against ``reference_tone``, or (without one) its stability across sentences."""

    def __init__(self, *, reference_tone: str | None = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name or "tone", **kwargs)
        self.reference_tone = reference_tone

    def _run(self, input: TextLike, output: TextLike) -> ScorerResult:
        text = to_text(output)
        if self.reference_tone:
            response, reference = sentiment(text), sentiment(self.reference_tone)
            difference = abs(response - reference)
            return ScorerResult(
                score=max(0.0, 1.0 - difference / 2.0),
                preprocess_step_result={
                    "response_sentiment": response,
                    "reference_sentiment": reference,
                    "difference": difference,
                },
            )
        sentences = _SENTENCE.findall(text) or [text]
        values = [sentiment(s) for s in sentences]
        mean = sum(values) / len(values)
        variance = sum((v - mean) ** 2 for v in values) / len(values)
        return ScorerResult(
            score=max(0.0, 1.0 - variance),
            preprocess_step_result={"avg_sentiment": mean, "sentiment_variance": variance},
        )


_analyzer: Any = None
_analyzer_lock = threading.Lock()


def sentiment(text: str) -> float:
    """VADER's compound sentiment of ``text``, in [-1, 1] (0 for text it has no words for)."""
    global _analyzer
    if _analyzer is None:
        with _analyzer_lock:
            if _analyzer is None:
                require_extra("vaderSentiment", "text", feature="the tone scorer")
                from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

                _analyzer = SentimentIntensityAnalyzer()
    return float(_analyzer.polarity_scores(text)["compound"])


def create_content_similarity_scorer(
    *, ignore_case: bool = True, ignore_whitespace: bool = True, name: str | None = None
) -> ContentSimilarityScorer:
    """Character-bigram similarity (0-1) of input and output."""
    return ContentSimilarityScorer(ignore_case=ignore_case, ignore_whitespace=ignore_whitespace, name=name)


def create_keyword_coverage_scorer(*, name: str | None = None) -> KeywordCoverageScorer:
    """The share (0-1) of the input's keywords that the output contains (1 when it has none)."""
    return KeywordCoverageScorer(name=name)


def create_textual_difference_scorer(*, name: str | None = None) -> TextualDifferenceScorer:
    """Sequence similarity (0-1) of input and output, with the changes counted."""
    return TextualDifferenceScorer(name=name)


def create_tone_scorer(*, reference_tone: str | None = None, name: str | None = None) -> ToneScorer:
    """Tone consistency (0-1): with ``reference_tone``, closeness of the output's sentiment to
    it; without, how steady the sentiment is from one sentence of the output to the next."""
    return ToneScorer(reference_tone=reference_tone, name=name)
