"""RegexEvaluator: a fixed pattern, a pattern read from the example, modes, flags, timeouts."""

from __future__ import annotations

import re
from typing import Any

import pytest

from assay.evaluators.text.string import RegexEvaluator


def test_search_finds_the_pattern_anywhere(run_of: Any) -> None:
    result = RegexEvaluator(r"\d{4}-\d{2}-\d{2}").evaluate(run_of("Due on 2024-05-01."), None)
    assert result.key == "regex_match"
    assert result.score == 1.0
    assert result.metadata["match"] == "2024-05-01"
    assert result.metadata["span"] == [7, 17]


def test_no_match_scores_zero(run_of: Any) -> None:
    result = RegexEvaluator(r"\d+").evaluate(run_of("no digits here"), None)
    assert result.score == 0.0 and "match" not in result.metadata


@pytest.mark.parametrize(
    ("mode", "text", "score"),
    [
        ("search", "say yes", 1.0),
        ("match", "say yes", 0.0),
        ("match", "yes please", 1.0),
        ("fullmatch", "yes please", 0.0),
        ("fullmatch", "yes", 1.0),
    ],
)
def test_modes(mode: Any, text: str, score: float, run_of: Any) -> None:
    assert RegexEvaluator("yes", mode=mode).evaluate(run_of(text), None).score == score


def test_re_flags_and_compiled_patterns(run_of: Any) -> None:
    assert RegexEvaluator("hello", re.IGNORECASE).evaluate(run_of("HELLO"), None).score == 1.0
    compiled = re.compile("^b", re.MULTILINE)
    assert RegexEvaluator(compiled).evaluate(run_of("a\nb"), None).score == 1.0
    assert RegexEvaluator("^b").evaluate(run_of("a\nb"), None).score == 0.0


def test_zero_argument_form_reads_the_pattern_from_the_example(run_of: Any, example_of: Any) -> None:
    evaluator = RegexEvaluator()
    assert evaluator.evaluate(run_of("order #123"), example_of(pattern=r"#\d+")).score == 1.0
    assert evaluator.evaluate(run_of("order #abc"), example_of(pattern=r"#\d+")).score == 0.0
    # LangChain's convention: the reference output itself is the pattern
    assert evaluator.evaluate(run_of("abc"), example_of("^a")).score == 1.0


def test_zero_argument_form_without_a_pattern_is_an_errored_result(run_of: Any) -> None:
    result = RegexEvaluator().evaluate(run_of("abc"), None)
    assert result.score is None and "needs an example" in result.error


def test_invalid_patterns(run_of: Any, example_of: Any) -> None:
    with pytest.raises(ValueError, match=r"pattern= '\(unclosed' is not a valid regular expression"):
        RegexEvaluator("(unclosed")
    result = RegexEvaluator().evaluate(run_of("x"), example_of(pattern="[a-"))
    assert result.score is None and "the example's pattern '[a-' is not a valid" in result.error
    result = RegexEvaluator().evaluate(run_of("x"), example_of(pattern=5))
    assert result.score is None and "must be a string" in result.error


def test_catastrophic_backtracking_times_out_as_an_errored_result(run_of: Any) -> None:
    evaluator = RegexEvaluator(r"(a|aa)+$", timeout=0.2)
    result = evaluator.evaluate(run_of("a" * 5000 + "b"), None)
    assert result.score is None
    assert "did not finish within 0.2 s" in result.error


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="mode"):
        RegexEvaluator("a", mode="anywhere")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unsupported re flags"):
        RegexEvaluator("a", flags=re.DEBUG)


# -- RE2: linear whatever the pattern (the evaluator service's engine) ---------------------
# exponentially many ways to split the a's for a backtracker (the regex module spots the
# nested quantifier of (a+)+$ and fails it fast; (a|aa)+$ it does not)
CATASTROPHIC = [("(a+)+$", "a" * 30 + "b"), ("(a|aa)+$", "a" * 40 + "b")]


@pytest.mark.parametrize(("pattern", "text"), CATASTROPHIC)
def test_re2_answers_a_catastrophic_pattern(pattern: str, text: str, run_of: Any) -> None:
    linear = RegexEvaluator(pattern, engine="re2").evaluate(run_of(text), None)
    assert linear.score == 0.0 and linear.error is None and linear.metadata["engine"] == "re2"
    assert RegexEvaluator(pattern, engine="re2").evaluate(run_of(text[:-1]), None).score == 1.0


def test_the_backtracking_engine_gives_up_where_re2_answers(run_of: Any) -> None:
    pattern, text = CATASTROPHIC[1]
    backtracking = RegexEvaluator(pattern, timeout=0.05).evaluate(run_of(text), None)
    assert backtracking.score is None and "did not finish" in (backtracking.error or "")


def test_re2_keeps_the_modes_the_flags_and_the_source(run_of: Any, example_of: Any) -> None:
    evaluator = RegexEvaluator("^b.c", re.IGNORECASE | re.MULTILINE | re.DOTALL, engine="re2")
    result = evaluator.evaluate(run_of("a\nB\nC"), None)
    assert result.score == 1.0 and result.metadata["pattern"] == "^b.c" and result.metadata["span"] == [2, 5]
    assert RegexEvaluator("yes", mode="fullmatch", engine="re2").evaluate(run_of("yes!"), None).score == 0.0
    assert RegexEvaluator("yes", mode="match", engine="re2").evaluate(run_of("yes!"), None).score == 1.0
    from_example = RegexEvaluator(engine="re2").evaluate(run_of("order #12"), example_of(pattern=r"#\d+$"))
    assert from_example.score == 1.0 and from_example.metadata["match"] == "#12"


def test_re2_refuses_what_only_a_backtracker_can_do_and_says_why(run_of: Any, example_of: Any) -> None:
    result = RegexEvaluator(engine="re2").evaluate(run_of("aa"), example_of(pattern=r"(a)\1"))
    assert result.score is None
    assert r"'(a)\\1' is not a regular expression RE2 accepts" in (result.error or "")
    assert "no backreferences or lookaround" in (result.error or "")
    with pytest.raises(ValueError, match="IGNORECASE, MULTILINE and DOTALL"):
        RegexEvaluator("a b", re.VERBOSE, engine="re2")
    with pytest.raises(ValueError, match="engine"):
        RegexEvaluator("a", engine="pcre")  # type: ignore[arg-type]
