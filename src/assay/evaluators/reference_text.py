"""Compatibility path for ``assay.evaluators.text.reference_text``."""

from assay.evaluators.text.reference_text import BleuEvaluator, RougeEvaluator, bleu_tokenizer, references_of

__all__ = ["BleuEvaluator", "RougeEvaluator", "bleu_tokenizer", "references_of"]
