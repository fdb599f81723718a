"""Evaluators of text and structured output that need no model: exact, regex, JSON, string and
embedding distances, reference-text metrics (BLEU, ROUGE)."""
