"""UnitTestGenerationEvaluator on real generated test suites in the sandbox: good, weak,
worthless (always passes, fails on the reference) and hostile ones."""

from __future__ import annotations

from typing import Any

import pytest

import assay
from assay.evaluators import UnitTestGenerationEvaluator
from assay.evaluators.unit_tests import mutants
from assay.sandbox import SandboxConfig
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

REFERENCE = '''def clamp(x, lo, hi):
    """Keep x within [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def grade(score):
    if score >= 90:
        return "A"
    elif score >= 75:
        return "B"
    return "C"
'''

GOOD = """from solution import clamp, grade

def test_clamp():
    assert clamp(5, 0, 10) == 5
    assert clamp(-1, 0, 10) == 0
    assert clamp(11, 0, 10) == 10

def test_grade_edges():
    assert grade(90) == "A" and grade(89) == "B"
    assert grade(75) == "B" and grade(74) == "C"
"""
WEAK = """from solution import clamp

def test_clamp_inside():
    assert clamp(5, 0, 10) == 5
"""
ALWAYS_PASSES = """def test_everything_is_fine():
    assert True
"""
FAILS_ON_REFERENCE = """from solution import grade

def test_grade():
    assert grade(90) == "B"
"""
UNITTEST_STYLE = """import unittest
from solution import clamp, grade

class ClampTest(unittest.TestCase):
    def test_clamp(self):
        self.assertEqual(clamp(-1, 0, 10), 0)
        self.assertEqual(clamp(11, 0, 10), 10)
        self.assertEqual(clamp(3, 0, 10), 3)

    def test_grade(self):
        self.assertEqual([grade(90), grade(89), grade(75), grade(74)], ["A", "B", "B", "C"])
"""


def scores(tests: Any, **kwargs: Any) -> dict[str, EvaluationResult]:
    evaluator = UnitTestGenerationEvaluator(**kwargs)
    example = Example(inputs={"reference": REFERENCE})
    results = evaluator.evaluate(Run(outputs=None if tests is None else {"output": tests}), example)
    assert isinstance(results, EvaluationResults), results
    return {r.key.removeprefix("unit_tests_"): r for r in results.results}


@pytest.mark.slow
def test_good_weak_and_worthless_suites_are_ranked() -> None:
    good, weak, always = scores(GOOD), scores(WEAK), scores(ALWAYS_PASSES)
    assert good["pass"].score == weak["pass"].score == always["pass"].score == 1
    m = {name: s["mutation_score"].score for name, s in [("good", good), ("weak", weak), ("always", always)]}
    assert m["good"] > m["weak"] > m["always"] == 0.0, m
    assert good["line_coverage"].score == 1.0 and good["branch_coverage"].score == 1.0
    assert 0 < weak["line_coverage"].score < 1 and weak["branch_coverage"].score < 1  # type: ignore[operator]
    assert always["line_coverage"].score == 0.0  # the module was never imported
    mutants_shown = good["mutation_score"].metadata["mutants"]
    assert {row["status"] for row in mutants_shown} <= {"killed", "survived", "timeout"}
    assert all({"operator", "line", "change"} <= set(row) for row in mutants_shown)
    assert weak["line_coverage"].metadata["missing_lines"]  # what the weak suite missed
    assert good["pass"].metadata["sandbox"]["backend"] == "bubblewrap"


@pytest.mark.slow
def test_a_suite_failing_on_the_reference_scores_zero_everywhere_with_the_reason() -> None:
    result = scores(FAILS_ON_REFERENCE)
    assert {k: r.score for k, r in result.items()} == {
        "pass": 0,
        "mutation_score": 0.0,
        "line_coverage": 0.0,
        "branch_coverage": 0.0,
    }
    assert "fail on the reference" in (result["pass"].comment or "")
    assert "test_grade" in (result["mutation_score"].comment or "")
    assert result["pass"].metadata["tests"]["failures"][0]["name"].endswith("test_grade")


@pytest.mark.slow
def test_unittest_framework_without_pytest() -> None:
    result = scores(UNITTEST_STYLE, framework="unittest")
    assert result["pass"].score == 1, result["pass"].comment
    assert result["mutation_score"].score > 0.5  # type: ignore[operator]
    assert result["line_coverage"].score == 1.0


@pytest.mark.slow
def test_no_tests_and_syntax_errors_are_failures_not_errors() -> None:
    empty = scores("import solution\n")
    assert empty["pass"].score == 0 and "no tests" in (empty["pass"].comment or "")
    broken = scores("def test_x(:\n    pass\n")
    assert broken["pass"].score == 0 and "cannot be collected" in (broken["pass"].comment or "")
    nothing = scores(None)
    assert nothing["pass"].score == 0 and nothing["pass"].error is None


HANGS_ON_MUTANTS = """import solution

def test_clamp():
    assert solution.clamp(5, 0, 10) == 5
    if solution.clamp(-1, 0, 10) != 0:
        while True:
            pass
"""
KILLS_THE_SUPERVISOR = """import os, signal
from solution import clamp

def test_clamp():
    assert clamp(5, 0, 10) == 5
    if clamp(11, 0, 10) != 10:
        os.kill(os.getppid(), signal.SIGKILL)
"""
ESCAPES = """import os, socket

def test_escape():
    for path in ("/etc/shadow", "/root/.ssh/id_rsa"):
        try:
            open(path).read()
        except OSError:
            pass
        else:
            raise SystemExit(f"read {path}")
    try:
        open("/usr/assay-escape", "w")
    except OSError:
        pass
    else:
        raise SystemExit("wrote /usr")
    assert os.environ.get("ASSAY_TEST_API_KEY") is None
    try:
        socket.create_connection(("1.1.1.1", 80), timeout=1)
    except OSError:
        pass
    else:
        raise SystemExit("reached the network")
"""


@pytest.mark.slow
def test_a_test_that_hangs_on_a_mutant_is_stopped_and_counts_as_a_kill() -> None:
    result = scores(HANGS_ON_MUTANTS, mutant_timeout=2.0)  # the reference is rerun within half of it
    rows = result["mutation_score"].metadata["mutants"]
    assert any(row["status"] == "timeout" for row in rows), rows
    assert all(row.get("seconds", 0) < 5 for row in rows)


@pytest.mark.slow
def test_a_suite_killing_its_supervisor_only_loses_its_own_kills() -> None:
    result = scores(KILLS_THE_SUPERVISOR)
    assert result["pass"].score == 1
    statuses = [row["status"] for row in result["mutation_score"].metadata["mutants"]]
    assert "not_run" in statuses  # counted as survived, never as killed
    killed = sum(s in ("killed", "timeout") for s in statuses)
    assert result["mutation_score"].score == killed / len(statuses)


@pytest.mark.slow
def test_hostile_suite_is_contained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_API_KEY", "sk-secret")
    result = scores(ESCAPES, max_mutants=0)
    assert result["pass"].score == 1, result["pass"].comment
    assert "mutation_score" not in result


def test_missing_reference_is_an_error_naming_the_field_before_anything_runs() -> None:
    evaluator = UnitTestGenerationEvaluator(sandbox=SandboxConfig(backend="rlimit"))
    result = evaluator.evaluate(Run(outputs={"output": GOOD}), Example(inputs={}))
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and "example.inputs['reference']" in result.error
    bad = evaluator.evaluate(Run(outputs={"output": GOOD}), Example(inputs={"reference": "def f(:\n"}))
    assert isinstance(bad, EvaluationResult) and "line 1" in (bad.error or "")


def test_bad_configuration_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="framework must be one of pytest, unittest"):
        UnitTestGenerationEvaluator(framework="nose")
    with pytest.raises(ValueError, match="mutant_timeout"):
        UnitTestGenerationEvaluator(mutant_timeout=0)


def test_mutants_are_deterministic_for_a_seed_and_change_one_thing() -> None:
    first, total = mutants(REFERENCE, 5, seed=7)
    again, _ = mutants(REFERENCE, 5, seed=7)
    other, _ = mutants(REFERENCE, 5, seed=8)
    assert total > 5 and len(first) == 5
    assert [m.source for m in first] == [m.source for m in again]
    assert [m.source for m in first] != [m.source for m in other]
    for mutant in first:
        changed = [(a, b) for a, b in zip(REFERENCE.splitlines(), mutant.source.splitlines()) if a != b]
        assert len(changed) == 1 and changed[0][0].strip() != ""
        assert '"""Keep x within [lo, hi]."""' in mutant.source  # docstrings untouched


def test_mutation_operators() -> None:
    source = "def f(a, b):\n    if a <= b and not a:\n        return a + b * 2\n    return -a\n"
    changes = {m.description for m in mutants(source, 100)[0]}
    assert {
        "'<=' -> '<'",
        "'and' -> 'or'",
        "'not ' -> ''",
        "'+' -> '-'",
        "'*' -> '/'",
        "'2' -> '3'",
        "'-' -> ''",
        "'a + b * 2' -> 'None'",
    } <= changes


@pytest.mark.slow
def test_through_evaluate() -> None:
    data = [{"inputs": {"reference": REFERENCE, "quality": q}} for q in ("good", "always")]
    suites = {"good": GOOD, "always": ALWAYS_PASSES}
    results = assay.evaluate(
        lambda inputs: {"output": f"```python\n{suites[inputs['quality']]}```"},
        data=data,
        evaluators=[UnitTestGenerationEvaluator(max_mutants=8)],
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    rows = [{r.key: r.score for r in row["evaluation_results"]["results"]} for row in results]
    assert rows[0]["unit_tests_pass"] == rows[1]["unit_tests_pass"] == 1
    assert rows[0]["unit_tests_mutation_score"] > 0.5 > rows[1]["unit_tests_mutation_score"]


def _slowed_where(condition: str) -> str:
    """A suite that never imports the code (every mutant survives it), slowed as a burst
    of load would slow it, in the runs whose folder meets ``condition``."""
    return f"""import os, time
def test_nothing_imported():
    folder = os.path.basename(os.getcwd())
    if {condition}:
        time.sleep(60)
"""


# -- verdicts the tests cannot forge ---------------------------------------------------------
CORRUPTS_ITS_REPORT = """import json, os

def test_clamp():
    from solution import clamp
    assert clamp(5, 0, 10) == 5
    forged = '{"passed": 3, "tests": 5, "collection_errors": 7}'
    json.dumps = lambda obj, **options: forged
    json.dump = lambda obj, handle, **options: handle.write(forged)
"""
REWRITES_ITS_RESULT_FILE = """import json, os, time
from solution import clamp

def test_clamp():
    assert clamp(5, 0, 10) == 5
    if os.fork() == 0:  # outlives the run, rewriting what a result file would hold
        os.setsid()
        stop = time.monotonic() + 3
        while time.monotonic() < stop:
            with open("forged.json", "w") as handle:
                handle.write('{"passed": 7, "tests": "x", "collection_errors": 1}')
            os.replace("forged.json", "result.json")
        os._exit(0)
"""
FLOODS_ITS_CHANNEL = """import os

def test_clamp():
    from solution import clamp
    assert clamp(5, 0, 10) == 5
    for fd in range(3, 64):
        try:
            os.write(fd, b"[" * 1000)
        except OSError:
            pass
"""


@pytest.mark.slow
def test_a_timeout_from_a_burst_of_load_is_not_a_kill() -> None:
    transient = _slowed_where('folder.startswith("m") and "-" not in folder')  # each mutant's first run only
    result = scores(transient, mutant_timeout=1.0, max_mutants=3)
    rows = result["mutation_score"].metadata["mutants"]
    assert [row["status"] for row in rows] == ["survived"] * len(rows), rows
    assert result["mutation_score"].score == 0


@pytest.mark.slow
def test_a_timeout_while_the_reference_is_slow_too_is_undecided_not_a_kill() -> None:
    loaded = _slowed_where('folder != "reference"')  # the first reference run measured fast
    result = scores(loaded, mutant_timeout=1.0, max_mutants=2)
    rows = result["mutation_score"].metadata["mutants"]
    assert [row["status"] for row in rows] == ["undecided"] * len(rows), rows
    assert result["mutation_score"].score == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "suite", [CORRUPTS_ITS_REPORT, FLOODS_ITS_CHANNEL], ids=["corrupts-report", "floods-channel"]
)
def test_a_suite_that_forges_its_report_scores_zero_never_an_error(suite: str) -> None:
    result = scores(suite, max_mutants=2)
    for metric in result.values():
        assert metric.error is None, metric.error
        assert metric.score == 0, (metric.key, metric.score, metric.comment)
    assert "malformed" in (result["pass"].comment or "") or "no tests" in (result["pass"].comment or "")


@pytest.mark.slow
def test_a_process_left_behind_cannot_rewrite_the_verdict() -> None:
    result = scores(REWRITES_ITS_RESULT_FILE, max_mutants=3)
    assert all(metric.error is None for metric in result.values())
    assert result["pass"].score == 1, result["pass"].comment
    assert result["pass"].metadata["tests"]["passed"] == 1
