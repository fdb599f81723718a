"""The store's value codec, for what keeps or sends values the way the store does (the
evaluator service's wire, the comparison's reads, the code evaluators' display): exact
floats, big ints, tuples, bytes, odd keys, never failing on a value (the table of tags is
in ``_json``)."""

from __future__ import annotations

from assay.store._json import dumps, loads, untag

__all__ = ["dumps", "loads", "untag"]
