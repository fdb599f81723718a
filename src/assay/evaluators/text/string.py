"""String evaluators: exact match, regular expression and edit distance (on rapidfuzz).

Each reads the run's output (``output_key``) and the example's reference
(``reference_key``); see ``assay.evaluators._fields`` for how the keys default.
"""

from __future__ import annotations

import re
import string
import unicodedata
from typing import Any, Literal

import regex
from rapidfuzz.distance import (
    DamerauLevenshtein,
    Hamming,
    Indel,
    Jaro,
    JaroWinkler,
    Levenshtein,
)

from assay.errors import EvaluatorInputError, require_extra
from assay.evaluators._fields import ReferenceEvaluator, as_text
from assay.schemas import EvaluationResult, Example, Run

__all__ = [
    "Distance",
    "ExactMatchEvaluator",
    "RegexEvaluator",
    "RegexMode",
    "StringDistanceEvaluator",
    "Whitespace",
]


Whitespace = Literal["exact", "strip", "collapse", "ignore"]
_WHITESPACE = re.compile(r"\s+")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


class ExactMatchEvaluator(ReferenceEvaluator):
    """1.0 when the output equals the reference, after the chosen normalization, else 0.0.

    ``whitespace``: ``"exact"`` keeps it, ``"strip"`` (default) trims both ends,
    ``"collapse"`` also turns each inner run into one space, ``"ignore"`` drops it all.
    A list of strings as the reference lists acceptable answers: any of them matches.
    Other non-string values (numbers, lists, dicts) are compared as values when both sides
    are non-strings, else as JSON text.
    """

    default_name = "exact_match"
    score_range = (0.0, 1.0)

    def __init__(
        self,
        *,
        ignore_case: bool = False,
        whitespace: Whitespace = "strip",
        ignore_punctuation: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if whitespace not in ("exact", "strip", "collapse", "ignore"):
            raise ValueError(
                "ExactMatchEvaluator(whitespace=...) must be 'exact', 'strip', 'collapse' "
                f"or 'ignore', got {whitespace!r}"
            )
        self.ignore_case = ignore_case
        self.whitespace = whitespace
        self.ignore_punctuation = ignore_punctuation

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        prediction, reference = self.prediction(run), self.reference(example)
        if isinstance(prediction, str) and _is_text_list(reference):
            # several acceptable answers (aliases): any of them will do
            text = self.normalize(prediction)
            return self.result(1.0 if any(text == self.normalize(r) for r in reference) else 0.0)
        if not isinstance(prediction, str) and not isinstance(reference, str):
            return self.result(1.0 if _same_value(prediction, reference) else 0.0)
        left, right = self.normalize(as_text(prediction)), self.normalize(as_text(reference))
        return self.result(1.0 if left == right else 0.0)

    def normalize(self, text: str) -> str:
        text = unicodedata.normalize("NFC", text)
        if self.ignore_case:
            text = text.casefold()
        if self.ignore_punctuation:
            text = text.translate(_PUNCTUATION)
        if self.whitespace == "strip":
            text = text.strip()
        elif self.whitespace == "collapse":
            text = _WHITESPACE.sub(" ", text).strip()
        elif self.whitespace == "ignore":
            text = _WHITESPACE.sub("", text)
        return text


def _is_text_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _same_value(left: Any, right: Any) -> bool:
    # True == 1 in Python, but a boolean is not a number in an answer
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return bool(left == right)


RegexMode = Literal["search", "match", "fullmatch"]
RegexEngine = Literal["regex", "re2"]
_FLAG_NAMES = {
    re.IGNORECASE: regex.IGNORECASE,
    re.MULTILINE: regex.MULTILINE,
    re.DOTALL: regex.DOTALL,
    re.VERBOSE: regex.VERBOSE,
    re.ASCII: regex.ASCII,
    re.UNICODE: regex.UNICODE,
}


class RegexEvaluator(ReferenceEvaluator):
    """1.0 when the output matches a regular expression, else 0.0.

    With ``pattern``, every output is checked against it. Without one (``RegexEvaluator()``,
    the ``"regex_match"`` name), the pattern is read from the example's reference output:
    ``example.outputs["pattern"]``, else ``"regex"``, ``"output"`` or its only value, as in
    LangChain's regex evaluator. ``mode`` is ``"search"`` (anywhere, default), ``"match"``
    (at the start) or ``"fullmatch"``.

    ``engine="regex"`` (default) is Python's syntax, backtracking: matching stops after
    ``timeout`` seconds (a catastrophic pattern gives an errored result instead of a hung
    experiment). ``engine="re2"`` is Google's RE2 (the ``google-re2`` package, in the
    ``service`` extra): linear in the text whatever the pattern, without backreferences
    or lookaround. The evaluator service matches with RE2: there the pattern is a
    stranger's, and one second of backtracking per request is a way to stall the server.
    """

    default_name = "regex_match"
    score_range = (0.0, 1.0)
    reference_candidates = ("pattern", "regex", "output")

    def __init__(
        self,
        pattern: str | re.Pattern[str] | None = None,
        flags: int | re.RegexFlag = 0,
        *,
        mode: RegexMode = "search",
        timeout: float = 1.0,
        engine: RegexEngine = "regex",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if mode not in ("search", "match", "fullmatch"):
            raise ValueError(
                f"RegexEvaluator(mode=...) must be 'search', 'match' or 'fullmatch', got {mode!r}"
            )
        if engine not in ("regex", "re2"):
            raise ValueError(f"RegexEvaluator(engine=...) must be 'regex' or 're2', got {engine!r}")
        self.engine = engine
        source: str | None = None
        if isinstance(pattern, re.Pattern):
            # re sets UNICODE on every str pattern; it is regex's default anyway
            source, flags = pattern.pattern, int(flags) | (pattern.flags & ~re.UNICODE)
        else:
            source = pattern
        self.flags = _regex_flags(int(flags))
        self.mode = mode
        self.timeout = timeout
        self.pattern = None if source is None else self._compile(source, "pattern=")

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        compiled = self.pattern
        if compiled is None:
            source = self.reference(example)
            if not isinstance(source, str):
                raise EvaluatorInputError(
                    f"the regex pattern read from the example must be a string, got {type(source).__name__}"
                )
            compiled = self._compile(source, "the example's pattern")
        text = as_text(self.prediction(run))
        try:
            found = self._find(compiled, text)
        except TimeoutError as exc:
            raise TimeoutError(
                f"regex {compiled.pattern!r} did not finish within {self.timeout:g} s "
                f"on an output of {len(text)} characters"
            ) from exc
        metadata: dict[str, Any] = {"pattern": compiled.pattern, "engine": self.engine}
        if found is not None:
            metadata["match"] = found.group(0)
            metadata["span"] = list(found.span())
        return self.result(1.0 if found is not None else 0.0, metadata=metadata)

    def _compile(self, source: str, what: str) -> Any:
        if self.engine == "re2":
            return _compile_re2(source, self.flags, what)
        return _compile(source, self.flags, what)

    def _find(self, compiled: Any, text: str) -> Any:
        if self.engine == "re2":
            return getattr(compiled, self.mode)(text)  # linear: no time limit needed
        return getattr(compiled, self.mode)(text, timeout=self.timeout)


def _regex_flags(flags: int) -> int:
    """``re`` flags to ``regex`` flags (their ASCII values differ)."""
    unknown = flags & ~sum(_FLAG_NAMES)
    if unknown:
        raise ValueError(f"RegexEvaluator(flags=...) has unsupported re flags: {unknown:#x}")
    return sum(regex_flag for re_flag, regex_flag in _FLAG_NAMES.items() if flags & re_flag)


def _compile(pattern: str, flags: int, what: str) -> Any:
    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        raise EvaluatorInputError(f"{what} {pattern!r} is not a valid regular expression: {exc}") from exc


Distance = Literal["levenshtein", "damerau_levenshtein", "jaro", "jaro_winkler", "hamming", "indel"]
_METRICS: dict[str, Any] = {
    "levenshtein": Levenshtein,
    "damerau_levenshtein": DamerauLevenshtein,
    "jaro": Jaro,
    "jaro_winkler": JaroWinkler,
    "hamming": Hamming,
    "indel": Indel,
}


class StringDistanceEvaluator(ReferenceEvaluator):
    """The edit distance between output and reference, as LangChain's string distance: the
    score is a *distance* (0 = identical).

    ``normalize_score=True`` (default) scales it to [0, 1] (divided by the longer length;
    Jaro and Jaro-Winkler are 1 - similarity); ``False`` gives the raw edit count. Hamming
    pads the shorter string. ``metadata["similarity"]`` is ``1 - normalized distance``.
    """

    default_name = "string_distance"
    direction = "lower"

    def __init__(
        self,
        distance: Distance = "levenshtein",
        normalize_score: bool = True,
        *,
        ignore_case: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        metric = _METRICS.get(distance)
        if metric is None:
            raise ValueError(
                f"StringDistanceEvaluator(distance={distance!r}) is not supported; "
                f"choose one of: {', '.join(_METRICS)}"
            )
        self.distance = distance
        self.normalize_score = normalize_score
        self.score_range = (0.0, 1.0) if normalize_score else (0.0, None)
        self.ignore_case = ignore_case
        self._metric = metric

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        prediction = as_text(self.prediction(run))
        reference = as_text(self.reference(example))
        if self.ignore_case:
            prediction, reference = prediction.casefold(), reference.casefold()
        if prediction == reference:  # exactly 0, whatever the metric's arithmetic gives
            normalized = score = 0.0
        else:
            normalized = float(self._metric.normalized_distance(prediction, reference))
            score = (
                normalized if self.normalize_score else float(self._metric.distance(prediction, reference))
            )
        return self.result(score, metadata={"distance": self.distance, "similarity": 1.0 - normalized})


_RE2_FLAGS = {regex.IGNORECASE: "i", regex.MULTILINE: "m", regex.DOTALL: "s"}


def _compile_re2(pattern: str, flags: int, what: str) -> Any:
    """``pattern`` for RE2, the flags as its inline ones (RE2 has no verbose mode)."""
    re2 = require_extra("re2", "service", feature="RegexEvaluator(engine='re2')")
    unsupported = flags & ~(sum(_RE2_FLAGS) | regex.UNICODE | regex.ASCII)
    if unsupported:
        raise ValueError("RegexEvaluator(engine='re2') supports the IGNORECASE, MULTILINE and DOTALL flags")
    inline = "".join(letter for flag, letter in _RE2_FLAGS.items() if flags & flag)
    options = re2.Options()
    options.log_errors = False  # the error is raised, not also printed to stderr
    try:
        compiled = re2.compile(f"(?{inline}){pattern}" if inline else pattern, options)
    except re2.error as exc:
        message = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise EvaluatorInputError(
            f"{what} {pattern!r} is not a regular expression RE2 accepts: {message} "
            "(RE2 matches in linear time, so it has no backreferences or lookaround)"
        ) from exc
    return _Re2Pattern(compiled, pattern)


class _Re2Pattern:
    """RE2's compiled pattern under the source the caller wrote (not the inline flags)."""

    def __init__(self, compiled: Any, pattern: str) -> None:
        self.pattern = pattern
        self.search, self.match, self.fullmatch = compiled.search, compiled.match, compiled.fullmatch
