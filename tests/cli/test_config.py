"""`assay run eval.toml` and `[tool.assay]`: a CI job in one line; the flags still win."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import run_assay

from assay import Client

EVAL_TOML = """
target = "app:answer"
data = "data.jsonl"
evaluators = ["app:correct", "exact_match"]
summary_evaluators = ["app:accuracy"]
prefix = "from-toml"
metadata = { suite = "smoke" }

[fail_under]
correct = 0.7
accuracy = "0.7"
"""


def test_a_config_file_is_the_whole_run(project: Path) -> None:
    (project / "eval.toml").write_text(EVAL_TOML, encoding="utf-8")
    done = run_assay("run", "eval.toml", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "correct >= 0.7" in done.stdout and "accuracy >= 0.7" in done.stdout
    (record,) = Client(str(project / ".assay" / "assay.db")).list_experiments()
    assert record.name.startswith("from-toml-") and record.metadata == {"suite": "smoke"}
    assert record.config["evaluators"] == ["correct", "exact_match"]
    stricter = run_assay(
        "run", "eval.toml", "--fail-under", "correct=0.9", "--experiment", "named", cwd=project
    )
    assert stricter.returncode == 1 and "named" in stricter.stdout


def test_pyproject_tool_assay_is_read_when_no_target_is_given(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.assay]\ntarget = "app:answer"\ndata = "data.jsonl"\n'
        'evaluators = "app:correct"\nfail-under = { correct = "0.9" }\n',
        encoding="utf-8",
    )
    done = run_assay("run", cwd=project)
    assert done.returncode == 1, done.stderr
    assert "0.800 < 0.9" in done.stdout


def test_config_mistakes_name_the_file_and_key(project: Path) -> None:
    (project / "eval.toml").write_text(
        'target = "app:answer"\ndata = "data.jsonl"\nevaluater = ["app:correct"]\n'
    )
    done = run_assay("run", "eval.toml", cwd=project)
    assert (
        done.returncode == 2
        and "eval.toml: unknown key 'evaluater' (did you mean 'evaluators'?)" in done.stderr
    )
    (project / "eval.toml").write_text('target = "app:answer"\nrepetitions = "two"\n')
    done = run_assay("run", "eval.toml", cwd=project)
    assert done.returncode == 2 and "repetitions must be an integer" in done.stderr
    (project / "eval.toml").write_text('target = "app:answer\n')
    done = run_assay("run", "eval.toml", cwd=project)
    assert done.returncode == 2 and "eval.toml: invalid TOML" in done.stderr
    done = run_assay("run", cwd=project)
    assert done.returncode == 2 and "[tool.assay]" in done.stderr
