"""Evaluators of text and structured output that need no model: exact, regex, JSON, string and
embedding distances, reference-text metrics (BLEU, ROUGE)."""

from assay.errors import require_extra

__all__: list[str] = []


for _module in ("regex", "rapidfuzz"):
    require_extra(_module, "text", feature="the text evaluators")
