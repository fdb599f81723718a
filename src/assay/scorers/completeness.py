"""The completeness scorer (Mastra's): how much of the input's key elements the output covers.

Elements are content words as lemmas (verbs as infinitives, nouns singular), Chinese words
from jieba, Japanese kanji/katakana runs and Korean stems; function words and the words
that only frame a request ("what", "the", "explain") are not required unless
``include_function_words=True``. The score and ``missing_elements`` use one rule
(``assay.evaluators.text._analysis.match``), so ``covered + missing == input elements`` always holds.
"""

from __future__ import annotations

from typing import Any

from assay.evaluators.text._analysis.elements import extract_elements
from assay.evaluators.text._analysis.match import CoverageIndex, split_covered
from assay.scorers._base import Scorer, ScorerResult, TextLike, to_text

__all__ = ["CompletenessScorer", "create_completeness_scorer"]


class CompletenessScorer(Scorer):
    """Use :func:`create_completeness_scorer`."""

    def __init__(
        self, *, include_function_words: bool = False, name: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(name=name or "completeness", **kwargs)
        self.include_function_words = include_function_words

    def _run(self, input: TextLike, output: TextLike) -> ScorerResult:
        if input is None:  # an empty text is fine; no input at all is a mistake in the call
            raise ValueError("the completeness scorer needs an input (the text to be covered)")
        options = {"include_function_words": self.include_function_words}
        required = extract_elements(to_text(input), **options)
        offered = extract_elements(to_text(output), **options)
        covered, missing = split_covered(required.elements, CoverageIndex(offered))
        total = len(required.elements)
        score = len(covered) / total if total else 1.0
        return ScorerResult(
            score=score,
            reason=_reason(len(covered), total, missing),
            preprocess_step_result={
                "input_elements": [element.text for element in required.elements],
                "output_elements": [element.text for element in offered.elements],
                "missing_elements": missing,
                "element_counts": {"input": total, "output": len(offered.elements)},
            },
            analyze_step_result={"covered_elements": covered},
        )


def _reason(covered: int, total: int, missing: list[str]) -> str:
    if total == 0:
        return "the input has no key elements to cover"
    text = f"the output covers {covered} of the input's {total} key elements"
    if missing:
        text += "; missing: " + ", ".join(missing)
    return text


def create_completeness_scorer(
    *, include_function_words: bool = False, name: str | None = None
) -> CompletenessScorer:
    """Score (0-1) the share of the input's nouns, verbs, topics and terms that the output covers.

    ``include_function_words=True`` makes function words ("the", "what", "的") and request
    framing ("explain", "请") required too, as in the reference implementation.
    """
    return CompletenessScorer(include_function_words=include_function_words, name=name)
