"""``APICallEvaluator``: does generated code call an HTTP API correctly?

The example gives the API as an OpenAPI 3 document (``inputs["openapi"]``: a mapping, or
JSON / YAML text), optionally faults to inject (``inputs["api_faults"]``: ``[{"operation":
"GET /users/{id}", "status": 429 | 500 | "timeout", "times": 1, "delay": 3, "headers":
{...}, "query": {...}}]``) and fixtures (``inputs["api_fixtures"]``: ``{"GET /items?cursor=2":
{"status": 200, "body": ..., "request_headers": {...}}}``, see ``_fixtures``); and what to
check (``outputs["expected_calls"]``: ``[{"method", "path", "query", "body"}]``, a path
being concrete or a template; ``outputs["expected_result"]``: the JSON value the code
prints last; ``outputs["require_idempotency_key"]``: retried POST/PATCH calls must repeat
their ``Idempotency-Key``).

The code runs in the sandbox, whose network namespace reaches nothing but a relay to the
mock server assay starts from the document (see ``_in_sandbox``); the base URL is in the
``API_BASE_URL`` environment variable and in ``sys.argv[1]``. Checks: the code ran, every
request was declared and valid, the expected calls were made (in order if asked), every
injected fault was followed by a successful retry (after the ``Retry-After`` it was given,
with the same ``Idempotency-Key``), and the final result. ``<name>`` is 1
when all applicable checks pass; ``<name>_checks`` is the fraction that passed.
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import shutil
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay.errors import CaseError, EvaluatorInputError, SandboxSetupError
from assay.evaluation.evaluator import BaseEvaluator
from assay.evaluators.api._checks import (
    Check,
    check_calls,
    check_idempotency,
    check_result,
    check_retries,
    check_retry_after,
    check_valid,
    expected_calls,
    faults,
)
from assay.evaluators.api._fixtures import parse_fixtures
from assay.evaluators.api._mock import MockAPI
from assay.evaluators.api._openapi import load_document, parse_api
from assay.evaluators.code._cases import code_from_run
from assay.sandbox import (
    Limits,
    SandboxConfig,
    ScriptRun,
    cache_root,
    get_language,
    get_pool,
    require_ready,
    sandbox_site,
)
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

API_TOOLS = ("requests", "httpx")
MARK = "\x1eassay-api "
SCRIPT = Path(__file__).with_name("_in_sandbox.py").read_text(encoding="utf-8")
PLACEHOLDER = 'PAYLOAD: dict[str, Any] = globals().get("PAYLOAD", {})'


class APICallEvaluator(BaseEvaluator):
    """Run API-calling code in the sandbox against a mock of the example's OpenAPI API.

    Args:
        name: the key of the 1/0 metric (and prefix of ``<name>_checks``).
        ordered: the expected calls must come in their order (other calls may come
            between them, such as retries); ``outputs["ordered"]`` wins.
        timeout: seconds for the code.
        output_key: where the code is in ``run.outputs``.
        sandbox, limits: as for CodeCorrectnessEvaluator.
    """

    def __init__(
        self,
        name: str = "api_calls",
        *,
        ordered: bool = True,
        timeout: float = 30.0,
        output_key: str | None = None,
        sandbox: SandboxConfig | None = None,
        limits: Limits | None = None,
    ) -> None:
        super().__init__(name=name)
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.ordered, self.timeout, self.output_key = ordered, timeout, output_key
        self.sandbox_config = sandbox or SandboxConfig()
        self.limits = limits or Limits()

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResults:
        inputs = dict(example.inputs) if example is not None and example.inputs else {}
        outputs = dict(example.outputs) if example is not None and example.outputs else {}
        if "openapi" not in inputs:
            raise EvaluatorInputError(
                "APICallEvaluator needs example.inputs['openapi'] (the OpenAPI document)"
            )
        api = parse_api(
            load_document(inputs["openapi"], "example.inputs['openapi']"), "example.inputs['openapi']"
        )
        injected = faults(inputs.get("api_faults"), "example.inputs['api_faults']")
        fixtures = parse_fixtures(inputs.get("api_fixtures") or {}, "example.inputs['api_fixtures']")
        expected = expected_calls(outputs.get("expected_calls"), "example.outputs['expected_calls']")
        ordered = bool(outputs.get("ordered", self.ordered))
        try:
            code = code_from_run(run, self.output_key, get_language("python"))
        except CaseError as exc:
            return self._results([Check("ran", False, str(exc))], {})
        socket_path = os.path.join(_socket_folder(), secrets.token_hex(16) + ".sock")
        with MockAPI(api, socket_path, injected, fixtures) as mock:
            done = self._run(code, api.base_path, socket_path)
        calls = mock.recorder.snapshot()
        report = _report(done)
        checks = [_ran(report)]
        if report is not None:
            checks.append(check_valid(calls))
            if expected:
                checks.append(check_calls(calls, expected, ordered, api.base_path))
            etiquette = [
                check_retries(calls),
                check_idempotency(calls, bool(outputs.get("require_idempotency_key"))),
                check_retry_after(calls),
            ]
            checks += [check for check in etiquette if check is not None]
            if "expected_result" in outputs:
                checks.append(check_result(str(report.get("stdout") or ""), outputs["expected_result"]))
        return self._results(
            checks,
            {
                "calls": calls,
                "api": api.title,
                "base_url": (report or {}).get("base_url"),
                "stdout": str((report or {}).get("stdout") or "")[-2000:],
                "log": str((report or {}).get("log") or "")[-2000:],
                "sandbox": done.sandbox,
            },
        )

    def _run(self, code: str, base_path: str, socket_path: str) -> ScriptRun:
        site = sandbox_site(API_TOOLS)
        config = site.config(self.sandbox_config)
        config = replace(config, extra_ro_paths=(*config.extra_ro_paths, _socket_folder()))
        payload = {
            "site": site.path,
            "code": code,
            "socket": socket_path,
            "base_path": base_path,
            "timeout": self.timeout,
        }
        script = SCRIPT.replace(PLACEHOLDER, f"PAYLOAD = json.loads({json.dumps(payload)!r})", 1)
        pool = get_pool(config)
        if not pool.describe()["protections"].get("network_isolation"):
            raise SandboxSetupError(
                f"APICallEvaluator needs a sandbox with its own network (bubblewrap); the "
                f"{pool.backend.name} backend would let the code reach any host"
            )
        done: ScriptRun = pool.run_script(get_language("python"), script, self.timeout + 10.0, self.limits)
        return done

    def _results(self, checks: list[Check], metadata: dict[str, Any]) -> EvaluationResults:
        passed = sum(check.passed for check in checks)
        failed = [check for check in checks if not check.passed]
        comment = (
            "all checks passed"
            if not failed
            else "; ".join(f"{check.name}: {check.detail}" for check in failed)
        )
        return EvaluationResults(
            results=[
                EvaluationResult(
                    key=self.name,
                    score=int(not failed),
                    comment=comment,
                    metadata={"checks": [c.shown() for c in checks], **metadata},
                ),
                EvaluationResult(key=f"{self.name}_checks", score=passed / len(checks)),
            ]
        )


def _ran(report: dict[str, Any] | None) -> Check:
    if report is None:
        return Check("ran", False, "the code's run ended without a report")
    if report.get("timed_out"):
        return Check("ran", False, "the code timed out")
    if report.get("exit") != 0:
        return Check(
            "ran",
            False,
            f"the code failed (exit {report.get('exit')}): {str(report.get('log') or '')[-600:]}",
        )
    return Check("ran", True, "the code ran to its end")


def _report(done: ScriptRun) -> dict[str, Any] | None:
    """The final report, None if the program died after getting ready (the generated
    code's doing); raises if it never got ready (the sandbox's)."""
    lines = require_ready(done, MARK, "the API client")
    return next((line for line in reversed(lines) if "exit" in line), None)


_folder: str | None = None
_folder_lock = threading.Lock()


def _socket_folder() -> str:
    """One folder per process for the mock servers' sockets, mounted into the sandbox.
    Traversable but not listable by the sandbox's uid; each socket has a random name."""
    global _folder
    with _folder_lock:
        if _folder is None:
            parent = cache_root() / "api-sockets"
            parent.mkdir(parents=True, exist_ok=True)
            _folder = tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=parent)
            os.chmod(_folder, 0o711)
            atexit.register(shutil.rmtree, _folder, True)
        return _folder
