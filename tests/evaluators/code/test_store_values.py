"""Strings and values on their way through the sandbox, the comparison and the store:
any string is stored and read back, exact values survive, one odd row never fails an
experiment."""

from __future__ import annotations

import math
import sys
from typing import Any

import pytest

import assay
from assay.evaluation import EvaluationResult
from assay.evaluators import CodeCorrectnessEvaluator
from assay.sandbox import SandboxConfig
from assay.store._json import dumps, loads

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py
BACKENDS = fixtures.BACKENDS


pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

JS_REVERSE = "function solution(s) { return s.split('').reverse().join(''); }"


def canonical(value: Any) -> Any:
    """Type and content, exactly: -0.0 is not 0.0, NaN equals NaN, 2000! has no repr."""
    kind = type(value).__name__
    if isinstance(value, float):
        return kind, value.hex()
    if isinstance(value, int) and not isinstance(value, bool):
        return kind, format(value, "x")
    if isinstance(value, (list, tuple)):
        return kind, [canonical(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return kind, sorted(map(repr, map(canonical, value)))
    if isinstance(value, dict):
        return kind, sorted((repr(canonical(k)), repr(canonical(v))) for k, v in value.items())
    return kind, value


def stored(client: assay.Client, name: str) -> list[dict[str, Any]]:
    return list(client.read_experiment(name))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lone_surrogates_from_an_honest_javascript_reverse_are_stored(backend: str) -> None:
    client = assay.Client(database_url="sqlite://")
    cases = [
        {"input": "a\U0001f600b", "expected_output": "b\U0001f600a"},
        {"input": "abc", "expected_output": "cba"},
    ]
    evaluator = CodeCorrectnessEvaluator(
        language="javascript", execution_timeout=10, sandbox=SandboxConfig(backend=backend, workers=1)
    )
    results = assay.evaluate(
        lambda inputs: {"text": JS_REVERSE},
        data=[{"inputs": {"test_cases": cases, "n": n}} for n in range(20)],
        evaluators=[evaluator],
        client=client,
        progress=False,
        experiment_prefix=f"surrogates-{backend}",
    )
    rows = stored(client, results.experiment_name)
    assert len(rows) == 20
    for row in rows:
        (result,) = row["evaluation_results"]["results"]
        assert result.error is None and result.score == 0.5  # the emoji case really fails
        first = result.metadata["test_cases_details"][0]
        assert first["actual_output"] == "b\ude00\ud83da"
    assert client.store.get_experiment(name=results.experiment_name).status == "completed"


def test_any_string_from_a_target_an_evaluator_or_a_summary_is_stored() -> None:
    odd = "lone \ud800 high, \udfff low, NUL \x00 and 😀"

    def judge(outputs: dict[str, Any]) -> EvaluationResult:
        return EvaluationResult(
            key="judge", score=1, comment=odd, feedback=odd, value=odd, metadata={odd: [odd]}
        )

    def summary(outputs: list[Any]) -> EvaluationResult:
        return EvaluationResult(key="summary", score=1, comment=odd)

    client = assay.Client(database_url="sqlite://")
    results = assay.evaluate(
        lambda inputs: {"answer": odd},
        data=[{"inputs": {"q": odd}}] * 3,
        evaluators=[judge],
        summary_evaluators=[summary],
        client=client,
        progress=False,
    )
    rows = stored(client, results.experiment_name)
    assert len(rows) == 3
    for row in rows:
        assert row["run"].outputs == {"answer": odd}
        (result,) = row["evaluation_results"]["results"]
        assert result.value == odd and result.metadata == {odd: [odd]}
        # text columns keep what UTF-8 can carry and escape the rest
        assert result.comment == "lone \\ud800 high, \\udfff low, NUL \x00 and 😀"
    (summary_result,) = client.read_experiment(results.experiment_name).summary_results.results
    assert summary_result.comment is not None and "\\ud800" in summary_result.comment


def test_an_unstorable_row_is_stored_as_errored_and_the_rest_go_on() -> None:
    def evaluator(inputs: dict[str, Any]) -> EvaluationResult:
        return EvaluationResult(key="size", score=10**400 if inputs["n"] == 2 else 1)

    client = assay.Client(database_url="sqlite://")
    results = assay.evaluate(
        lambda inputs: {"ok": True},
        data=[{"inputs": {"n": n}} for n in range(5)],
        evaluators=[evaluator],
        client=client,
        progress=False,
    )
    rows = stored(client, results.experiment_name)
    assert len(rows) == 5
    by_n = {row["run"].inputs["n"]: row["evaluation_results"]["results"][0] for row in rows}
    assert [by_n[n].score for n in (0, 1, 3, 4)] == [1, 1, 1, 1]
    assert by_n[2].score is None and "could not be stored" in (by_n[2].error or "")
    assert client.store.get_experiment(name=results.experiment_name).status == "completed"


EXACT_VALUES: list[Any] = [
    {1: "a", 2: {3: [4]}},
    math.inf,
    -math.inf,
    -0.0,
    {1, 2, 3},
    frozenset({"x"}),
    (1, (2, 3)),
    b"\x00\xffbytes",
    math.factorial(2000),
    -(2**100),
    {"$set": [1]},
    {(1, 2): True},
    "\ud800 lone",
    [math.nan],
]


@pytest.mark.parametrize("value", EXACT_VALUES, ids=lambda v: type(v).__name__)
def test_values_read_back_exactly(value: Any) -> None:
    assert canonical(loads(dumps(value))) == canonical(value)


def test_old_stored_data_is_still_readable() -> None:
    # as written before tags existed: sets as lists, big ints as digits, keys as text
    assert loads('{"1": [1, 2], "big": 123456789012345678901234567890}') == {
        "1": [1, 2],
        "big": 123456789012345678901234567890,
    }
    assert loads('{"$unknown": 1}') == {"$unknown": 1}


@pytest.mark.parametrize("backend", BACKENDS)
def test_expected_values_survive_the_dataset_and_correct_code_passes(backend: str) -> None:
    """Int-keyed dicts, NaN, inf, sets, tuples, bytes and 2000! in a stored dataset: the
    correct answer scores 1, and the stored details show the exact values."""
    code = (
        "import math\n"
        "def solution(kind):\n"
        "    return {'dict': {1: 'one', 2: 'two'}, 'nan': float('nan'),\n"
        "            'inf': float('-inf'), 'set': {1, 2}, 'tuple': (1, 2),\n"
        "            'bytes': b'\\x00\\xff', 'fact': math.factorial(2000),\n"
        "            'negzero': -0.0}[kind]\n"
    )
    expected = {
        "dict": {1: "one", 2: "two"},
        "nan": math.nan,
        "inf": -math.inf,
        "set": {1, 2},
        "tuple": (1, 2),
        "bytes": b"\x00\xff",
        "fact": math.factorial(2000),
        "negzero": -0.0,
    }
    client = assay.Client(database_url="sqlite://")
    dataset = client.create_dataset(dataset_name=f"exact-{backend}")
    client.create_example(
        dataset_id=dataset.id,
        inputs={
            "test_cases": [{"input": kind, "expected_output": value} for kind, value in expected.items()]
        },
    )
    evaluator = CodeCorrectnessEvaluator(
        execution_timeout=10, sandbox=SandboxConfig(backend=backend, workers=1)
    )
    results = assay.evaluate(
        lambda inputs: {"text": code},
        data=f"exact-{backend}",
        evaluators=[evaluator],
        client=client,
        progress=False,
    )
    (row,) = stored(client, results.experiment_name)
    (result,) = row["evaluation_results"]["results"]
    assert result.score == 1.0, result.comment
    actual = [d["actual_output"] for d in result.metadata["test_cases_details"]]
    assert canonical(actual) == canonical(list(expected.values()))


def test_ids_and_times_beside_a_value_orjson_refuses_are_written_as_orjson_writes_them() -> None:
    import datetime
    import uuid

    when = datetime.datetime(2026, 12, 1, 11, 0, tzinfo=datetime.timezone.utc)
    ident = uuid.UUID(int=7)
    plain = loads(dumps({"id": ident, "at": when}))
    # a lone surrogate makes orjson refuse the whole value: the stdlib encoder takes over
    mixed = loads(dumps({"id": ident, "at": when, "text": "\ud800"}))
    assert mixed["id"] == plain["id"] == str(ident)
    assert mixed["at"] == plain["at"] == when.isoformat()
