"""The service serves only what is safe remotely: no served built-in gives a caller the
content of a file on the server, and the served list is the documented one."""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_testing import LiveService

from assay.evaluation._names import EVALUATOR_NAMES
from assay.evaluators.data import DataTransformationEvaluator
from assay.schemas import Example, Run
from assay.service import RemoteEvaluator
from assay.service.builtins import NOT_SERVED, REMOTE_SAFE, RISKS, builtin_evaluators
from assay.service.errors import EvaluatorSpecError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "service.md"
SECRET = "canary-" + secrets.token_hex(16)


@pytest.fixture(scope="module")
def canary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A root-owned file only its owner may read, as /etc/shadow or a key would be."""
    if os.geteuid() != 0:
        pytest.fail("the canary must be root-only: run the service tests as root (as CI does)")
    path = tmp_path_factory.mktemp("host") / "secret.txt"
    path.write_text(SECRET + "\n")
    path.chmod(0o600)
    yield str(path)


def probes(path: str) -> dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """For each served built-in: run outputs, example inputs, example outputs that try to
    bring ``path``'s content back (by naming it as an input, or by code that opens it)."""
    read = f"open({path!r}).read()"
    printing = f"print({read})\n"
    text = ({"output": path}, {}, {"output": path})
    return {
        **{name: text for name in ("exact_match", "string_distance", "bleu", "rouge", "completeness")},
        **{name: text for name in ("content_similarity", "keyword_coverage", "textual_difference", "tone")},
        "regex_match": ({"output": path}, {}, {"output": re.escape(path)}),
        "json_validity": (
            {"output": "{}"},
            {},
            {"schema": {"$ref": Path(path).as_uri()}},
        ),
        "json_equality": ({"output": json.dumps({"$ref": path})}, {}, {"output": {"$ref": path}}),
        "code_correctness": (
            {"text": f"def solution(n):\n    return {read}"},
            {"test_cases": [{"input": 1, "expected_output": "x"}]},
            {},
        ),
        "ruff_lint": ({"output": printing}, {}, {}),
        "bandit_security": ({"output": printing}, {}, {}),
        "sql_validity": (
            {"output": f"ATTACH DATABASE '{path}' AS host; SELECT * FROM host.sqlite_master"},
            {"schema_sql": f"ATTACH DATABASE '{path}' AS host;"},
            {},
        ),
        "unit_tests": (
            {"output": f"def test_read():\n    assert {read} == ''\n"},
            {"reference": f"CONTENT = {read}\n"},
            {},
        ),
        "data_transformation": (
            {"output": f"import sys\nprint(open('in.csv').read())\n{printing}"},
            {"input_files": {"in.csv": {"path": path}}},
            {"expected_output": [{"a": 1}]},
        ),
        "api_calls": (
            {"output": printing},
            {
                "openapi": {
                    "openapi": "3.0.3",
                    "info": {"title": "t", "version": "1"},
                    "paths": {"/x": {"$ref": Path(path).as_uri()}},
                }
            },
            {},
        ),
        "trajectory_match": (
            {"messages": [{"role": "assistant", "content": path}]},
            {},
            {"trajectory": [{"name": "read", "args": {"path": path}}]},
        ),
        "tool_code": (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "1",
                                "type": "function",
                                "function": {"name": "python", "arguments": json.dumps({"code": printing})},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "1", "content": SECRET},
                ]
            },
            {},
            {},
        ),
    }


@pytest.fixture(scope="module")
def service() -> Iterator[LiveService]:
    with LiveService(builtin_evaluators()) as live:  # as `assay serve-evaluators --builtin`
        yield live


def test_every_served_builtin_has_a_probe() -> None:
    assert set(probes("/x")) == set(REMOTE_SAFE)


def test_the_served_builtins_are_the_documented_ones() -> None:
    found = re.search(r"<!-- served-builtins -->(.*?)<!-- /served-builtins -->", DOCS.read_text(), re.S)
    assert found is not None, "docs/service.md must list the served built-ins between the markers"
    assert re.findall(r"`(\w+)`", found.group(1)) == list(REMOTE_SAFE)
    assert list(builtin_evaluators()) == list(REMOTE_SAFE)  # every extra is installed in the tests


def test_every_builtin_is_either_safe_or_has_a_named_risk() -> None:
    assert set(REMOTE_SAFE) | set(RISKS) | set(NOT_SERVED) == set(EVALUATOR_NAMES)
    assert not set(REMOTE_SAFE) & set(RISKS) and not (set(REMOTE_SAFE) | set(RISKS)) & set(NOT_SERVED)


def test_a_builtin_that_would_read_the_servers_files_is_never_served() -> None:
    for allow in (False, True):
        with pytest.raises(EvaluatorSpecError, match=r"program is not served: .*server's disk"):
            builtin_evaluators(["exact_match", "program"], allow_model_calls=allow)


def test_a_model_backed_builtin_needs_the_opt_in_naming_its_risk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_JUDGE_MODEL", "openai/gpt-4o-mini")  # configured, never called
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")
    with pytest.raises(EvaluatorSpecError, match=r"qa .*model configured.*--allow-model-calls"):
        builtin_evaluators(["exact_match", "qa"])
    assert set(builtin_evaluators(["qa"], allow_model_calls=True)) == {"qa"}


@pytest.mark.slow
@pytest.mark.parametrize("name", REMOTE_SAFE)
def test_no_served_builtin_reads_a_root_only_file_back(service: LiveService, canary: str, name: str) -> None:
    outputs, inputs, reference = probes(canary)[name]
    if name == "tool_code":  # the recorded output is the caller's own text, not the file's
        outputs["messages"][1]["content"] = "nothing"
    remote = RemoteEvaluator(service.url, name, timeout=120, retries=0)
    answer = remote.evaluate(Run(inputs=inputs, outputs=outputs), Example(inputs=inputs, outputs=reference))
    assert SECRET not in repr(answer), f"{name} sent the server's file back: {answer!r}"


@pytest.mark.slow
def test_a_host_path_input_is_refused_by_the_service_and_says_what_to_send(
    service: LiveService, canary: str
) -> None:
    outputs, inputs, reference = probes(canary)["data_transformation"]
    remote = RemoteEvaluator(service.url, "data_transformation", timeout=120, retries=0)
    answer = remote.evaluate(Run(outputs=outputs), Example(inputs=inputs, outputs=reference))
    assert "host path are refused" in repr(answer) and "base64" in repr(answer)


def test_a_host_path_input_still_works_locally(tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    source.write_text("a\n1\n")
    evaluator = DataTransformationEvaluator()
    code = "import shutil\nshutil.copy('in.csv', 'output.csv')\n"
    example = Example(
        inputs={"input_files": {"in.csv": {"path": str(source)}}}, outputs={"expected_output": [{"a": 1}]}
    )
    answer = evaluator.evaluate(Run(outputs={"output": code}), example)
    assert answer.results[0].score == 1, answer  # type: ignore[union-attr]
