"""Text machinery shared by the text evaluators and the heuristic scorers: script runs, CJK
segmentation, normalization, element extraction and matching (the ``text`` extra)."""

from assay.errors import require_extra

for _module in ("regex", "lemminflect"):
    require_extra(_module, "text", feature="assay's text analysis")
