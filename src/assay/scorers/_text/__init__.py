"""Text machinery shared by the heuristic scorers: tokens, normalization, CJK, element extraction."""
