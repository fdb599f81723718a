"""UnitTestGenerationEvaluator on JavaScript ``node:test`` suites: Node's own runner in the
sandbox, mutants made on the reference's tokens, coverage from Node's lcov report."""

from __future__ import annotations

import pytest

from assay.evaluators import UnitTestGenerationEvaluator
from assay.evaluators.unit_tests._js_mutants import js_mutants
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

REFERENCE = """// grades
function clamp(x, lo, hi) {
  if (x < lo) return lo;
  if (x > hi) return hi;
  return x;
}

function grade(score) {
  if (score >= 90) return "A";
  else if (score >= 75) return "B";
  return "C";
}

module.exports = { clamp, grade };
"""
HEAD = "const test = require('node:test');\nconst assert = require('node:assert');\n"
GOOD = (
    HEAD
    + """const { clamp, grade } = require('./solution');

test('clamp', () => {
  assert.strictEqual(clamp(5, 0, 10), 5);
  assert.strictEqual(clamp(-1, 0, 10), 0);
  assert.strictEqual(clamp(11, 0, 10), 10);
});

test('grade edges', () => {
  assert.deepStrictEqual([grade(90), grade(89), grade(75), grade(74)], ['A', 'B', 'B', 'C']);
});
"""
)
WEAK = (
    HEAD
    + """const { clamp } = require('./solution');

test('clamp inside', () => { assert.strictEqual(clamp(5, 0, 10), 5); });
"""
)
FAILS_ON_REFERENCE = (
    HEAD
    + """const { grade } = require('./solution');

test('grade', () => { assert.strictEqual(grade(90), 'B'); });
"""
)
# prints what a naive reader of the runner's report would count as passes
PRINTS_FAKE_COUNTS = (
    HEAD
    + """const { grade } = require('./solution');

test('grade', () => {
  console.log('# tests 50\\n# pass 50\\n# fail 0');
  assert.strictEqual(grade(90), 'B');
});
"""
)


def scores(tests: str) -> dict[str, EvaluationResult]:
    evaluator = UnitTestGenerationEvaluator(framework="node:test")
    results = evaluator.evaluate(Run(outputs={"output": tests}), Example(inputs={"reference": REFERENCE}))
    assert isinstance(results, EvaluationResults), results
    return {r.key.removeprefix("unit_tests_"): r for r in results.results}


@pytest.mark.slow
@pytest.mark.toolchains
def test_good_and_weak_node_test_suites_are_ranked_by_mutants_and_coverage() -> None:
    good, weak = scores(GOOD), scores(WEAK)
    assert good["pass"].score == weak["pass"].score == 1, good["pass"].comment
    # x < lo -> x <= lo (and > -> >=) in clamp are equivalent mutants: nothing kills them
    rows = good["mutation_score"].metadata["mutants"]
    survived = {row["change"] for row in rows if row["status"] == "survived"}
    assert survived == {"'<' -> '<='", "'>' -> '>='"}, rows
    assert {row["status"] for row in rows} == {"killed", "survived"}
    assert weak["mutation_score"].score < good["mutation_score"].score
    assert good["line_coverage"].score == 1.0 and weak["line_coverage"].score < 0.8
    assert good["branch_coverage"].score > weak["branch_coverage"].score
    missing = weak["line_coverage"].metadata["missing_lines"]
    assert {9, 10, 11} <= set(missing) and 3 not in missing  # grade() is never called


@pytest.mark.slow
@pytest.mark.toolchains
@pytest.mark.parametrize("tests", [FAILS_ON_REFERENCE, PRINTS_FAKE_COUNTS])
def test_a_node_test_suite_failing_on_the_reference_scores_zero(tests: str) -> None:
    result = scores(tests)
    assert result["pass"].score == 0 and result["mutation_score"].score == 0.0
    assert "fail on the reference" in (result["pass"].comment or ""), result["pass"].comment


def test_node_test_is_a_known_framework() -> None:
    UnitTestGenerationEvaluator(framework="node:test")
    with pytest.raises(ValueError, match="pytest, unittest, node:test"):
        UnitTestGenerationEvaluator(framework="jest")


def test_the_token_mutator_changes_one_token_outside_comments_strings_and_regexes() -> None:
    source = 'const r = /a+b/g; // a + b\nconst s = "x < y" + `${1 + 2}`;\nmodule.exports = (a, b) => a < b && r.test(s);\n'
    made, total = js_mutants(source, 100)
    changes = {m.description for m in made}
    assert changes == {"'+' -> '-'", "'<' -> '<='", "'&&' -> '||'"}, changes
    assert total == 3
    for mutant in made:  # one token changed, every other character in place
        assert len(mutant.source) - len(source) in (0, 1)
    again, _ = js_mutants(REFERENCE, 4, seed=3)
    assert [m.source for m in again] == [m.source for m in js_mutants(REFERENCE, 4, seed=3)[0]]


# the token mutator takes the regex after `)` for a division: two of its mutants do not parse
FOOLED = "function f(x, s) {\n  if (x) /a/.test(s);\n  return x + 1;\n}\nmodule.exports = { f };\n"
FOOLED_TESTS = (
    HEAD + "const { f } = require('./solution');\n\ntest('f', () => { assert.strictEqual(f(1, 'a'), 2); });\n"
)


@pytest.mark.slow
@pytest.mark.toolchains
def test_a_mutant_that_does_not_parse_is_left_out_not_counted_as_killed() -> None:
    evaluator = UnitTestGenerationEvaluator(framework="node:test")
    results = evaluator.evaluate(Run(outputs={"output": FOOLED_TESTS}), Example(inputs={"reference": FOOLED}))
    assert isinstance(results, EvaluationResults)
    mutation = next(r for r in results.results if r.key == "unit_tests_mutation_score")
    statuses = sorted(row["status"] for row in mutation.metadata["mutants"])
    assert statuses == ["invalid", "invalid", "killed", "killed"], mutation.metadata["mutants"]
    assert mutation.score == 1.0 and mutation.metadata["total"] == 2 and mutation.metadata["invalid"] == 2
