"""Honest answers get right verdicts through ``evaluate()``: integers of any size are
compared exactly, and a dataset holding one still gets its content hash."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from assay import Client, evaluate
from assay.evaluators import CodeCorrectnessEvaluator
from assay.schemas import Example, Run

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

FACTORIAL = "import math\n\ndef solution(n):\n    return math.factorial(n)\n"
OFF_BY_ONE = "import math\n\ndef solution(n):\n    return math.factorial(n) + 1\n"


@pytest.mark.slow
def test_an_integer_of_thousands_of_digits_is_compared_exactly(tmp_path: Path) -> None:
    huge = math.factorial(2000)  # 5,736 digits: past int -> str's default limit of 4,300
    data = [
        {"inputs": {"code": code, "test_cases": [{"input": 2000, "expected_output": huge}]}}
        for code in (FACTORIAL, OFF_BY_ONE)
    ]
    client = Client(str(tmp_path / "big.db"))
    try:
        ran = evaluate(
            lambda inputs: {"output": inputs["code"]},
            data=data,
            evaluators=[CodeCorrectnessEvaluator()],
            client=client,
            progress=False,
        )
        scores = {
            row["example"].inputs["code"]: row["evaluation_results"]["results"][0].score
            for row in client.read_experiment(ran.experiment_name)
        }
        stored = client.read_experiment(ran.experiment_name)[0]["example"].inputs["test_cases"][0][
            "expected_output"
        ]
    finally:
        client.close()
    assert scores == {FACTORIAL: 1.0, OFF_BY_ONE: 0.0}
    assert stored == huge


def test_the_same_data_with_a_huge_integer_gets_the_same_dataset(tmp_path: Path) -> None:
    huge = math.factorial(2000)
    data = [{"inputs": {"n": 2000}, "outputs": {"output": huge}}]
    client = Client(str(tmp_path / "same.db"))
    try:
        first = evaluate(
            lambda inputs: {"output": huge},
            data=data,
            evaluators=["exact_match"],
            client=client,
            progress=False,
        )
        second = evaluate(
            lambda inputs: {"output": huge + 1},
            data=data,
            evaluators=["exact_match"],
            client=client,
            progress=False,
        )
    finally:
        client.close()
    assert first.aggregate["exact_match"].mean == 1.0 and second.aggregate["exact_match"].mean == 0.0
    assert first.get_dataset_id() == second.get_dataset_id()


FLOAT32 = {  # 0.1f, and a float32 sum whose widening is 0.30000001192... (failed the 1e-9 default)
    "go": "func solution(n int) []float32 {\n\tvar a, b float32 = 0.1, 0.2\n\treturn []float32{0.1, a + b, float32(n) / 4}\n}\n",
    "java": "import java.util.*;\nclass Solution {\n    public static List<Float> solution(int n) {\n"
    "        float a = 0.1f, b = 0.2f;\n        return Arrays.asList(0.1f, a + b, n / 4.0f);\n    }\n}\n",
    "cpp": "#include <vector>\nstd::vector<float> solution(int n) {\n    float a = 0.1f, b = 0.2f;\n"
    "    return {0.1f, a + b, n / 4.0f};\n}\n",
}


@pytest.mark.slow
@pytest.mark.toolchains
@pytest.mark.parametrize("language", sorted(FLOAT32))
def test_a_float32_answer_scores_against_the_decimal_it_means(language: str) -> None:
    cases = [
        {"input": 1, "expected_output": [0.1, 0.3, 0.25]},
        {"input": 3, "expected_output": [0.1, 0.3, 0.75]},
    ]
    evaluator = CodeCorrectnessEvaluator(language=language)
    result = evaluator.evaluate(
        Run(outputs={"output": FLOAT32[language]}), Example(inputs={"test_cases": cases})
    )
    assert result.score == 1.0, result.comment  # type: ignore[union-attr]
    # three float32 steps from what 0.1f + 0.2f means (0.30000001 is the same float32 as 0.3)
    wrong = [{"input": 1, "expected_output": [0.1, 0.3000001, 0.25]}]
    result = evaluator.evaluate(
        Run(outputs={"output": FLOAT32[language]}), Example(inputs={"test_cases": wrong})
    )
    assert result.score == 0.0, result.comment  # type: ignore[union-attr]


THIRDS = {  # 1/3 as a float32 three ways, and a rounded 0.3333 as a float32
    "go": "func solution(rough bool) float32 {\n\tif rough {\n\t\treturn 0.3333\n\t}\n"
    "\tvar one, three float32 = 1, 3\n\treturn one / three\n}\n",
    "java": "class Solution {\n    public static float solution(boolean rough) {\n"
    "        return rough ? 0.3333f : 1.0f / 3.0f;\n    }\n}\n",
    "cpp": "float solution(bool rough) {\n    return rough ? 0.3333f : 1.0f / 3.0f;\n}\n",
}


@pytest.mark.slow
@pytest.mark.toolchains
@pytest.mark.parametrize("language", sorted(THIRDS))
def test_a_float32_third_equals_a_third_at_float32_precision_and_a_rounded_one_does_not(
    language: str,
) -> None:
    """1/3f (0.33333334) is the float32 nearest 1/3: it passes against 1/3 at the default
    tolerance (it failed: 0.33333334 is 2e-8 from 1/3 as doubles); 0.3333f fails unless the
    tolerance allows 1e-4."""
    code = Run(outputs={"output": THIRDS[language]})

    def score(rough: bool, **tolerance: float) -> float | None:
        evaluator = CodeCorrectnessEvaluator(language=language, **tolerance)
        cases = [{"input": rough, "expected_output": 1 / 3}]
        result = evaluator.evaluate(code, Example(inputs={"test_cases": cases}))
        return result.score  # type: ignore[union-attr]

    assert score(rough=False) == 1.0
    assert score(rough=True) == 0.0
    assert score(rough=True, float_tolerance=1e-3) == 1.0
