"""BleuEvaluator and RougeEvaluator against the libraries they wrap, in English and Chinese."""

from __future__ import annotations

from typing import Any

import pytest
import sacrebleu
from rouge_score import rouge_scorer

from assay.evaluators.text.reference_text import BleuEvaluator, RougeEvaluator, bleu_tokenizer

HYPOTHESIS = "The quick brown fox jumped over the lazy dog near the river bank."
REFERENCE = "A quick brown fox jumps over the lazy dog by the river."


def test_bleu_equals_sacrebleu_sentence_bleu(run_of: Any, example_of: Any) -> None:
    result = BleuEvaluator().evaluate(run_of(HYPOTHESIS), example_of(REFERENCE))
    expected = sacrebleu.sentence_bleu(HYPOTHESIS, [REFERENCE])
    assert result.key == "bleu"
    assert result.score == pytest.approx(expected.score / 100)
    assert result.metadata["tokenize"] == "13a"
    assert result.metadata["precisions"] == pytest.approx([p / 100 for p in expected.precisions])
    assert result.metadata["brevity_penalty"] == pytest.approx(expected.bp)


def test_bleu_identical_is_one_and_unrelated_is_near_zero(run_of: Any, example_of: Any) -> None:
    evaluator = BleuEvaluator()
    assert evaluator.evaluate(run_of(REFERENCE), example_of(REFERENCE)).score == pytest.approx(1.0)
    unrelated = evaluator.evaluate(run_of("Stocks fell sharply on Monday."), example_of(REFERENCE))
    assert unrelated.score < 0.05


def test_bleu_with_several_references(run_of: Any, example_of: Any) -> None:
    references = ["Completely different words here.", HYPOTHESIS]
    result = BleuEvaluator().evaluate(run_of(HYPOTHESIS), example_of(references))
    assert result.score == pytest.approx(1.0)


def test_bleu_chinese_uses_the_zh_tokenizer(run_of: Any, example_of: Any) -> None:
    hypothesis, reference = (
        "光合作用是植物利用光能制造养分的过程。",
        "光合作用是植物利用光能合成有机物的过程。",
    )
    result = BleuEvaluator().evaluate(run_of(hypothesis), example_of(reference))
    expected = sacrebleu.sentence_bleu(hypothesis, [reference], tokenize="zh")
    assert result.metadata["tokenize"] == "zh"
    assert result.score == pytest.approx(expected.score / 100)
    assert 0.2 < result.score < 1.0


def test_bleu_tokenizer_choice() -> None:
    assert bleu_tokenizer(["plain English"]) == "13a"
    assert bleu_tokenizer(["English", "中文"]) == "zh"
    assert bleu_tokenizer(["光合成は植物"]) == "char"
    assert bleu_tokenizer(["การสังเคราะห์"]) == "char"


def test_bleu_options(run_of: Any, example_of: Any) -> None:
    lowered = BleuEvaluator(lowercase=True).evaluate(run_of("THE CAT SAT"), example_of("the cat sat"))
    assert lowered.score == pytest.approx(1.0)
    forced = BleuEvaluator(tokenize="char").evaluate(run_of("abc"), example_of("abd"))
    assert forced.metadata["tokenize"] == "char"
    with pytest.raises(Exception, match="nope"):
        BleuEvaluator(tokenize="nope")


def test_empty_reference_is_an_errored_result(run_of: Any, example_of: Any) -> None:
    for evaluator in (BleuEvaluator(), RougeEvaluator()):
        result = evaluator.evaluate(run_of("text"), example_of("  "))
        assert result.score is None and "reference text is empty" in result.error


def test_empty_output_scores_zero(run_of: Any, example_of: Any) -> None:
    assert BleuEvaluator().evaluate(run_of(""), example_of(REFERENCE)).score == 0.0
    results = RougeEvaluator().evaluate(run_of(None), example_of(REFERENCE)).results
    assert [r.score for r in results] == [0.0, 0.0, 0.0]


def test_rouge_equals_rouge_score(run_of: Any, example_of: Any) -> None:
    results = RougeEvaluator().evaluate(run_of(HYPOTHESIS), example_of(REFERENCE)).results
    expected = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True).score(
        REFERENCE, HYPOTHESIS
    )
    assert [r.key for r in results] == ["rouge1", "rouge2", "rougeL"]
    for result in results:
        assert result.score == pytest.approx(expected[result.key].fmeasure)
        assert result.metadata["precision"] == pytest.approx(expected[result.key].precision)
        assert result.metadata["recall"] == pytest.approx(expected[result.key].recall)
        assert result.metadata["tokenizer"] == "rouge-score"


def test_rouge_types_measure_and_name(run_of: Any, example_of: Any) -> None:
    evaluator = RougeEvaluator(["rouge3", "rougeLsum"], measure="recall", use_stemmer=False, name="summary")
    results = evaluator.evaluate(run_of(HYPOTHESIS), example_of(REFERENCE)).results
    expected = rouge_scorer.RougeScorer(["rouge3", "rougeLsum"]).score(REFERENCE, HYPOTHESIS)
    assert [r.key for r in results] == ["summary.rouge3", "summary.rougeLsum"]
    assert results[0].score == pytest.approx(expected["rouge3"].recall)
    single = RougeEvaluator("rougeL").evaluate(run_of(HYPOTHESIS), example_of(REFERENCE))
    assert single.key == "rougeL"  # one type: one result


def test_rouge_best_of_several_references(run_of: Any, example_of: Any) -> None:
    results = RougeEvaluator(["rouge1"]).evaluate(run_of(HYPOTHESIS), example_of(["zzz", HYPOTHESIS]))
    assert results.score == pytest.approx(1.0)


def test_rouge_on_chinese_is_not_zero(run_of: Any, example_of: Any) -> None:
    hypothesis, reference = (
        "光合作用是植物利用光能制造养分的过程。",
        "光合作用是植物利用光能合成有机物的过程。",
    )
    # rouge-score's own tokenizer drops every non-ASCII character: 0 on any Chinese text
    assert rouge_scorer.RougeScorer(["rouge1"]).score(reference, hypothesis)["rouge1"].fmeasure == 0.0
    results = RougeEvaluator().evaluate(run_of(hypothesis), example_of(reference)).results
    assert all(r.metadata["tokenizer"] == "multilingual" for r in results)
    rouge1 = results[0].score
    assert 0.5 < rouge1 < 1.0
    same = RougeEvaluator().evaluate(run_of(reference), example_of(reference)).results
    assert [r.score for r in same] == pytest.approx([1.0, 1.0, 1.0])


def test_rouge_bad_options() -> None:
    with pytest.raises(ValueError, match="unknown type"):
        RougeEvaluator(["rouge0"])
    with pytest.raises(ValueError, match="measure"):
        RougeEvaluator(measure="f1")  # type: ignore[arg-type]
