"""Reference-based text metrics: sentence BLEU (sacrebleu) and ROUGE-N / ROUGE-L (rouge-score).

Both accept one reference string or a list of them. Both handle Chinese and Japanese: BLEU
picks sacrebleu's ``zh`` (or ``char``) tokenizer when it sees such text; ROUGE, whose
default tokenizer drops every non-ASCII character, then tokenizes with jieba and script runs.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any, Literal

import regex

from assay.errors import EvaluatorInputError, require_extra
from assay.evaluators._fields import ReferenceEvaluator, as_text
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

__all__ = ["BleuEvaluator", "Measure", "RougeEvaluator", "bleu_tokenizer", "references_of"]


_HAN = regex.compile(r"\p{Han}")
_CHAR_SCRIPTS = regex.compile(r"[\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]")
_NON_ASCII_WORD = regex.compile(r"[^\x00-\x7f]")
_lock = threading.Lock()


def references_of(value: Any) -> list[str]:
    """One reference or several (a list of strings); an empty one is a data error."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        references = list(value)
    else:
        references = [as_text(value)]
    if not any(reference.strip() for reference in references):
        raise EvaluatorInputError("the reference text is empty; there is nothing to compare with")
    return references


def bleu_tokenizer(texts: Sequence[str]) -> str:
    """sacrebleu's tokenizer for these texts: ``char`` for kana and Thai-like scripts,
    ``zh`` for Han, else the standard ``13a``."""
    joined = "\n".join(texts)
    if _CHAR_SCRIPTS.search(joined):
        return "char"
    if _HAN.search(joined):
        return "zh"
    return "13a"


@functools.lru_cache(maxsize=32)
def _bleu_metric(tokenize: str, lowercase: bool, max_ngram_order: int) -> Any:
    require_extra("sacrebleu", "text", feature="BleuEvaluator")
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(tokenize=tokenize, lowercase=lowercase, max_ngram_order=max_ngram_order, effective_order=True)


class BleuEvaluator(ReferenceEvaluator):
    """Sentence BLEU of the output against the reference(s), scaled to [0, 1].

    ``tokenize="auto"`` chooses per example (see :func:`bleu_tokenizer`); any sacrebleu
    tokenizer name (``"13a"``, ``"intl"``, ``"zh"``, ``"char"``, ``"none"``) forces one.
    Smoothing is sacrebleu's sentence default (``exp``, effective order).
    """

    default_name = "bleu"

    def __init__(
        self, *, tokenize: str = "auto", lowercase: bool = False, max_ngram_order: int = 4, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.tokenize = tokenize
        self.lowercase = lowercase
        self.max_ngram_order = max_ngram_order
        if tokenize != "auto":
            _bleu_metric(tokenize, lowercase, max_ngram_order)  # an unknown name fails here

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        hypothesis = as_text(self.prediction(run))
        references = references_of(self.reference(example))
        tokenize = bleu_tokenizer([hypothesis, *references]) if self.tokenize == "auto" else self.tokenize
        metric = _bleu_metric(tokenize, self.lowercase, self.max_ngram_order)
        with _lock:  # sacrebleu metric objects keep per-call state
            result = metric.sentence_score(hypothesis, references)
        return self.result(
            result.score / 100.0,
            metadata={
                "tokenize": tokenize,
                "precisions": [p / 100.0 for p in result.precisions],
                "brevity_penalty": result.bp,
                "hypothesis_length": result.sys_len,
                "reference_length": result.ref_len,
            },
        )


Measure = Literal["fmeasure", "precision", "recall"]
_ROUGE_TYPE = regex.compile(r"rouge[1-9]|rougeL|rougeLsum")


class _WordTokenizer:
    """rouge-score's tokenizer interface over our multilingual word tokens."""

    def __init__(self, use_stemmer: bool) -> None:
        require_extra("nltk", "text", feature="RougeEvaluator's stemmer")
        from nltk.stem import porter

        self._stemmer = porter.PorterStemmer() if use_stemmer else None

    def tokenize(self, text: str) -> list[str]:
        from assay.evaluators.text._analysis.tokens import word_tokens

        tokens = word_tokens(text)
        if self._stemmer is None:
            return tokens
        stem = self._stemmer.stem
        return [stem(t) if len(t) > 3 and t.isascii() and t.isalpha() else t for t in tokens]


class RougeEvaluator(ReferenceEvaluator):
    """ROUGE-N (``"rouge1"`` ... ``"rouge9"``) and ROUGE-L (``"rougeL"``, ``"rougeLsum"``).

    One result per type, keyed by the type; the score is ``measure`` (F-measure by default)
    and the metadata holds precision, recall and F-measure. With several references the
    best-scoring one counts. ASCII text uses rouge-score's own tokenizer (Porter stemming
    with ``use_stemmer=True``); other text uses a multilingual one (jieba for Chinese).
    """

    default_name = "rouge"

    def __init__(
        self,
        rouge_types: Sequence[str] = ("rouge1", "rouge2", "rougeL"),
        *,
        use_stemmer: bool = True,
        measure: Measure = "fmeasure",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if isinstance(rouge_types, str):
            rouge_types = (rouge_types,)
        bad = [t for t in rouge_types if not _ROUGE_TYPE.fullmatch(t)]
        if bad or not rouge_types:
            raise ValueError(
                f"RougeEvaluator(rouge_types=...): unknown type(s) {bad or '[]'}; "
                "use 'rouge1'...'rouge9', 'rougeL' or 'rougeLsum'"
            )
        if measure not in ("fmeasure", "precision", "recall"):
            raise ValueError(
                f"RougeEvaluator(measure=...) must be 'fmeasure', 'precision' or 'recall', got {measure!r}"
            )
        self.rouge_types = tuple(rouge_types)
        self.use_stemmer = use_stemmer
        self.measure = measure
        self._scorers: dict[bool, Any] = {}

    def _scorer(self, multilingual: bool) -> Any:
        scorer = self._scorers.get(multilingual)
        if scorer is None:
            require_extra("rouge_score", "text", feature="RougeEvaluator")
            from rouge_score import rouge_scorer

            tokenizer = _WordTokenizer(self.use_stemmer) if multilingual else None
            scorer = rouge_scorer.RougeScorer(
                list(self.rouge_types), use_stemmer=self.use_stemmer, tokenizer=tokenizer
            )
            self._scorers[multilingual] = scorer
        return scorer

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResults:
        prediction = as_text(self.prediction(run))
        references = references_of(self.reference(example))
        multilingual = any(_NON_ASCII_WORD.search(t) for t in (prediction, *references))
        scores = self._scorer(multilingual).score_multi(references, prediction)
        tokenizer = "multilingual" if multilingual else "rouge-score"
        return EvaluationResults(
            results=[
                self._result(rouge_type, scores[rouge_type], tokenizer) for rouge_type in self.rouge_types
            ]
        )

    def _result(self, rouge_type: str, score: Any, tokenizer: str) -> EvaluationResult:
        values = {m: float(getattr(score, m)) for m in ("precision", "recall", "fmeasure")}
        return EvaluationResult(
            key=self._key(rouge_type), score=values[self.measure], metadata={**values, "tokenizer": tokenizer}
        )

    def _key(self, rouge_type: str) -> str:
        return rouge_type if self.name == self.default_name else f"{self.name}.{rouge_type}"
