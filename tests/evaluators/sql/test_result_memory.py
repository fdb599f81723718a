"""Result byte limits hold in memory: a query building huge values leaves the evaluating
process's peak RSS bounded (measured in a subprocess) and finishes within its timeout."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assay.evaluators import SQLExecutionEvaluator
from assay.schemas import EvaluationResult, Example, Run

# What one result may add to the process: max_result_bytes (32 MiB) of values, the
# driver's chunk in flight and Python's object overhead. The test allows 160 MB.
PEAK_GROWTH_BOUND_MB = 160
# The byte limit, not the timeout, must end each query ("too_large"); the timeout only
# has to outlast it. The SQLite cross join took 3.6-3.9 s at load 20, and at 5 s it ran
# out in 4 of the first 30 runs at load 15-25.
TIMEOUT_S = 30.0

SCRIPT = textwrap.dedent(
    """
    import json, resource, sys, time
    from assay.evaluators import SQLExecutionEvaluator
    from assay.schemas import Example, Run

    database, unsafe, sql = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
    evaluator = SQLExecutionEvaluator(database, timeout=%(timeout)s, unsafe_allow_privileged_role=unsafe)
    def run(generated):
        return evaluator.evaluate(Run(outputs={"sql": generated}), Example(outputs={"sql": "SELECT 1"}))
    run("SELECT 1")  # everything imported and connected
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = run(sql)
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({
        "verdict": result.value, "error": result.metadata.get("error"), "elapsed": elapsed,
        "growth_mb": (peak - baseline) / 1024, "metadata_chars": len(json.dumps(result.metadata)),
    }))
    """
) % {"timeout": TIMEOUT_S}


def _cap_address_space() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 * 1024**3, 3 * 1024**3))


def measure(database: str, sql: str, unsafe: bool = False) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, database, "1" if unsafe else "0", sql],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=_cap_address_space,  # without the limits, fail fast instead of swapping
    )
    assert done.returncode == 0, done.stderr
    figures: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def assert_bounded(figures: dict[str, object]) -> None:
    assert figures["verdict"] == "too_large", figures
    assert float(figures["growth_mb"]) < PEAK_GROWTH_BOUND_MB, figures  # type: ignore[arg-type]
    assert float(figures["elapsed"]) < TIMEOUT_S, figures  # type: ignore[arg-type]
    assert int(figures["metadata_chars"]) < 20_000, figures  # type: ignore[call-overload]


TWENTY_ROWS = "(WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 20) SELECT i FROM r)"


@pytest.mark.slow
@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT zeroblob(60000000) FROM {TWENTY_ROWS}",
        f"SELECT randomblob(900000), randomblob(900000), randomblob(900000), randomblob(900000), "
        f"randomblob(900000) FROM {TWENTY_ROWS}",  # each value fits, a row does not
        f"SELECT randomblob(1000000) FROM {TWENTY_ROWS} AS a, {TWENTY_ROWS} AS b",  # rows fit, the result does not
    ],
)
def test_sqlite_huge_results_stay_bounded(shop_sqlite: Path, sql: str) -> None:
    figures = measure(str(shop_sqlite), sql)
    print(f"sqlite peak growth {float(figures['growth_mb']):.1f} MB in {float(figures['elapsed']):.2f} s")  # type: ignore[arg-type]
    assert_bounded(figures)


@pytest.mark.slow
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT repeat('x', 100000000) FROM generate_series(1, 10)",
        "SELECT repeat('x', 900000) AS a, repeat('y', 900000), repeat('z', 900000), "
        "repeat('w', 900000), repeat('v', 900000) FROM generate_series(1, 10)",
        "SELECT repeat('x', 1000000) FROM generate_series(1, 400)",
        "SELECT decode(repeat('ab', 30000000), 'hex') FROM generate_series(1, 10)",
    ],
)
def test_postgres_huge_results_stay_bounded(shop_postgres: str, sql: str) -> None:
    figures = measure(shop_postgres, sql)
    print(f"postgres peak growth {float(figures['growth_mb']):.1f} MB in {float(figures['elapsed']):.2f} s")  # type: ignore[arg-type]
    assert_bounded(figures)


def evaluate(evaluator: SQLExecutionEvaluator, generated: str, reference: str) -> EvaluationResult:
    result = evaluator.evaluate(Run(outputs={"sql": generated}), Example(outputs={"sql": reference}))
    assert isinstance(result, EvaluationResult)
    return result


@pytest.mark.slow
def test_each_limit_is_named_and_results_within_them_match(shop_sqlite: Path, shop_postgres: str) -> None:
    for database, value in ((str(shop_sqlite), "randomblob({n})"), (shop_postgres, "repeat('x', {n})")):
        with SQLExecutionEvaluator(
            database, max_value_bytes=1000, max_row_bytes=1500, max_result_bytes=5000
        ) as evaluator:
            one = value.format(n=1200)
            assert "max_value_bytes=1,000" in str(evaluate(evaluator, f"SELECT {one}", "SELECT 1").comment)
            two = ", ".join([value.format(n=800)] * 2)
            assert "max_row_bytes=1,500" in str(evaluate(evaluator, f"SELECT {two}", "SELECT 1").comment)
            many = value.format(n=900)
            rows = f"SELECT {many} FROM (SELECT id FROM customers LIMIT 6) AS c"
            assert "max_result_bytes=5,000" in str(evaluate(evaluator, rows, "SELECT 1").comment)
            fits = "SELECT id, name FROM customers ORDER BY id LIMIT 3"
            assert evaluate(evaluator, fits, fits).score == 1


def test_long_values_are_clipped_in_metadata_with_a_marker(shop_sqlite: Path) -> None:
    with SQLExecutionEvaluator(shop_sqlite) as evaluator:
        result = evaluate(evaluator, "SELECT printf('%.5000c', 'x'), randomblob(3000)", "SELECT 1, 2")
    text, blob = result.metadata["generated"]["rows"][0]
    assert text.startswith("x" * 1000) and text.endswith("… [4,000 more characters]")
    assert blob.startswith("0x") and blob.endswith("… [2,744 more bytes]")


def test_trailing_semicolons_and_comments_keep_the_full_value_limit(shop_sqlite: Path) -> None:
    """The width probe nests the query: what ends it must not make it fall back to a tiny cap."""
    from assay.evaluators.sql.backends.base import ExecutionLimits
    from assay.evaluators.sql.backends.sqlite import SQLiteFile

    database = SQLiteFile(shop_sqlite, ExecutionLimits())
    with database.session(None) as session:
        for ending in ("", ";", " ; -- done", "\n-- one\n-- two\n", " /* c */;", "; /* c */"):
            result = session.run(f"SELECT randomblob(500000), 1{ending}")
            assert len(result.rows[0][0]) == 500_000, ending
