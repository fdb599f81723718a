"""Writes TALLY.md: each upstream unit test in scope and what became of it here.

    python tests/langsmith_compat/ported/_tally.py <langsmith-sdk git dir> <pytest junit xml>

The upstream names come from the langsmith-sdk checkout (``git show HEAD:<file>``); the
outcomes from a junit report of ``pytest tests/langsmith_compat/ported``. A ported test
whose docstring says "Documented difference" passes by asserting assay's documented rule.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

HERE = Path(__file__).parent

# upstream file -> our port
FILES = {
    "python/tests/unit_tests/evaluation/test_evaluator.py": "test_evaluator.py",
    "python/tests/unit_tests/evaluation/test_runner.py": "test_runner.py",
    "python/tests/unit_tests/test_run_trees.py": "test_run_trees.py",
    "python/tests/unit_tests/test_run_helpers.py": "test_run_helpers.py",
    "python/tests/unit_tests/test_expect.py": "test_expect.py",
    "python/tests/unit_tests/test_client.py": "test_client.py",
    "python/tests/unit_tests/test_testing.py": "test_testing.py",
    "python/tests/unit_tests/test_pytest_plugin.py": "test_pytest_plugin.py",
}

# Upstream tests in scope that another piece of work ports, by a pattern on their names.
PORTED_ELSEWHERE: list[tuple[str, str]] = []

# Upstream tests with nothing to test locally, by a pattern on their names.
NOT_APPLICABLE = [
    (
        r"parse_dotted_order|slice_parent_id|remap_for_project|distributed_parent_id|replica|sanitize_header|allowlists",
        "LangSmith's replica projects and private dotted-order helpers",
    ),
    (r"multipart|patch_exclude|attachment_moved|zstd|compression", "LangSmith's HTTP wire format"),
    (r"as_runnable|runnable_config|io_interops|from_runnable_config", "needs langchain-core (not installed)"),
    (
        r"feedback_includes_experiment|num_examples|comparative_url|comparative_experiment_results_exposes|"
        r"v2_run_to_schema|load_traces",
        "LangSmith's server payloads and URLs",
    ),
    (
        r"feedback_keys|collect_evaluator_keys|string_evaluator",
        "LangSmith's project feedback-key declaration",
    ),
    (
        r"client_not_passed|client_passed|client_not_called|traceable_project_name|project_name_set",
        "which LangSmith client posts a run",
    ),
    (r"ls_message_view|gc_leak|cached_attachment_args|dataset_examples_path", "LangSmith internals"),
    (
        r"is_localhost|backend_version|resource_version|langchain_hosted|retry_config|validate_api|"
        r"openapi|profile_config|validate_multiple_urls|^test_headers$|api_key|auth_overrides|"
        r"cached_header|host_url|workspace|construct_url|httpx_kwargs|base_url|project_issues|"
        r"generated_openapi|removed_sdk_methods",
        "LangSmith's server connection, credentials and generated API client",
    ),
    (
        r"client_gc|autoscale|batch|sampling|queue|max_batch_size|buffered_run_ops|run_ops_buffer|"
        r"error_callback|http_status|retry_on|pass_on_409",
        "LangSmith's background upload (batches, retries, sampling, queues)",
    ),
    (
        r"runtime_env|runtime_info|env_var_metadata",
        "LangSmith's runtime-environment metadata (assay adds none to runs)",
    ),
    (
        r"trace_retention|direct_post|requires_session_id|without_session_id",
        "LangSmith's trace retention and storage backends",
    ),
    (r"parse_token_or_url|shared_examples", "LangSmith's public and shared datasets"),
    (r"run_stats", "LangSmith's server-side run statistics (assay has no get_run_stats)"),
    (
        r"collection_groups|setup_outcome_replaces|table_counts",
        "the rich results table of LangSmith's plugin (--langsmith-output)",
    ),
    (r"prompt", "LangSmith's prompt hub"),
    (
        r"deprecation|get_run_url|get_url|read_thread|warn_about_list_runs|run_sharing|run_is_shared",
        "LangSmith's later server-API migration (deprecation warnings, share links)",
    ),
    (
        r"attachment_references_filesystem|reject_filesystem_attachments",
        "a private guard; its behaviour is ported as create_run tests (test_attachment_references_filesystem)",
    ),
]


def upstream_names(git_dir: str, path: str) -> list[str]:
    text = subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout
    return [
        node.name
        for node in ast.parse(text).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
    ]


def documented(port: Path) -> set[str]:
    tree = ast.parse(port.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and "Documented difference" in ast.get_source_segment(port.read_text(), node)  # type: ignore[operator]
    }


def outcomes(junit: str) -> dict[tuple[str, str], list[bool]]:
    found: dict[tuple[str, str], list[bool]] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1] + ".py"
        name = case.get("name", "").split("[", 1)[0]
        failed = any(child.tag in ("failure", "error") for child in case)
        found.setdefault((module, name), []).append(not failed)
    return found


def verdict(name: str, port: str, results: dict[tuple[str, str], list[bool]], differences: set[str]) -> str:
    ran = results.get((port, name))
    if ran is not None:
        if not all(ran):
            return f"fails on assay behaviour ({ran.count(False)} of {len(ran)} cases)"
        return "documented difference" if name in differences else "pass"
    for pattern, reason in PORTED_ELSEWHERE:
        if re.search(pattern, name):
            return f"not ported yet: {reason}"
    for pattern, reason in NOT_APPLICABLE:
        if re.search(pattern, name):
            return f"not applicable: {reason}"
    return "not ported yet"


def main(git_dir: str, junit: str) -> None:
    results = outcomes(junit)
    lines = ["# LangSmith's unit tests, ported", "", "Written by `_tally.py` (see its docstring).", ""]
    totals: dict[str, int] = {}
    body: list[str] = []
    for upstream, port in FILES.items():
        body += [f"## {upstream} -> {port}", "", "| upstream test | here |", "| --- | --- |"]
        differences = documented(HERE / port) if (HERE / port).exists() else set()
        for name in upstream_names(git_dir, upstream):
            outcome = verdict(name, port, results, differences)
            totals[outcome.split(":")[0].split(" (")[0]] = (
                totals.get(outcome.split(":")[0].split(" (")[0], 0) + 1
            )
            body.append(f"| `{name}` | {outcome} |")
        body.append("")
    lines += ["| outcome | upstream tests |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in sorted(totals.items())]
    lines += [""] + body
    (HERE / "TALLY.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
