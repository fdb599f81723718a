"""Text machinery shared by the text evaluators and the heuristic scorers: script runs, CJK segmentation, normalization, matching."""
