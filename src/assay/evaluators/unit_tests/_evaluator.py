"""``UnitTestGenerationEvaluator``: how good are the unit tests a model wrote?

The example gives a reference implementation (the code under test); the run's output is
a test file: Python (pytest or unittest) or JavaScript (``node:test``, Node's own runner;
the reference is then a CommonJS module the tests ``require('./solution')``, its mutants
made on its tokens, see ``_js_mutants``). In one sandbox job the tests run on the reference under coverage.py, then
once per mutant of the reference. Four metrics come back:

- ``<name>_pass``: 1 if the tests pass on the reference (a suite that fails on correct
  code is worthless: every metric is then 0, with the failing tests as the reason);
- ``<name>_mutation_score``: the fraction of mutants the tests kill (fail on, or time out on);
- ``<name>_line_coverage`` and ``<name>_branch_coverage`` of the reference.

The tests are the judge of the mutants, so a suite can only be as honest as it is: one
that compares the source text of the module kills every mutant. The sandbox protects the
host, not the score, from such a suite.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from assay.errors import CaseError, EvaluatorInputError
from assay.evaluation.evaluator import BaseEvaluator
from assay.evaluators.code._cases import code_from_run
from assay.evaluators.unit_tests._js_mutants import js_mutants
from assay.evaluators.unit_tests._mutants import Mutant, mutants
from assay.evaluators.unit_tests._report import Outcome, results_of
from assay.sandbox import TEST_TOOLS, Limits, SandboxConfig, get_language, get_pool, sandbox_site
from assay.schemas import EvaluationResults, Example, Run

FRAMEWORKS = ("pytest", "unittest", "node:test")
MARK = "\x1eassay-unit-tests "
SCRIPT = (Path(__file__).with_name("_in_sandbox.py")).read_text(encoding="utf-8")
PLACEHOLDER = 'PAYLOAD: dict[str, Any] = globals().get("PAYLOAD", {})'
assert PLACEHOLDER in SCRIPT


class UnitTestGenerationEvaluator(BaseEvaluator):
    """Score generated unit tests by pass-on-reference, mutation score and coverage.

    Args:
        name: prefix of the four metric keys.
        reference_key: where the reference code is (``example.inputs``, else
            ``example.outputs``).
        module: the module name the tests import the reference as
            (``example.inputs["module"]`` wins); default ``"solution"``.
        framework: ``"pytest"`` (runs unittest-style tests too), ``"unittest"`` (the
            standard library's runner) or ``"node:test"`` (JavaScript: Node's runner, line
            and branch coverage from its lcov report); ``example.inputs["framework"]`` wins.
        max_mutants: how many mutants at most (sampled with ``seed`` when there are more).
        seed: the sampling seed: the same seed gives the same mutants.
        reference_timeout: seconds for the run on the reference.
        mutant_timeout: seconds per mutant; ``None``: five times the reference run,
            at least 2 and at most ``max_mutant_timeout``.
        output_key: where the tests are in ``run.outputs`` (as CodeCorrectnessEvaluator).
        sandbox: a ``SandboxConfig``; limits: per-process ``Limits``.
    """

    def __init__(
        self,
        name: str = "unit_tests",
        *,
        reference_key: str = "reference",
        module: str = "solution",
        framework: str = "pytest",
        max_mutants: int = 20,
        seed: int = 0,
        reference_timeout: float = 30.0,
        mutant_timeout: float | None = None,
        max_mutant_timeout: float = 10.0,
        output_key: str | None = None,
        sandbox: SandboxConfig | None = None,
        limits: Limits | None = None,
    ) -> None:
        super().__init__(name=name)
        _check_framework(framework)
        if max_mutants < 0 or reference_timeout <= 0 or max_mutant_timeout <= 0:
            raise ValueError("max_mutants must be >= 0 and timeouts positive")
        if mutant_timeout is not None and mutant_timeout <= 0:
            raise ValueError(f"mutant_timeout must be positive, got {mutant_timeout}")
        self.reference_key, self.module, self.framework = reference_key, module, framework
        self.max_mutants, self.seed = max_mutants, seed
        self.reference_timeout, self.mutant_timeout = reference_timeout, mutant_timeout
        self.max_mutant_timeout = max_mutant_timeout
        self.output_key = output_key
        self.sandbox_config = sandbox or SandboxConfig()
        self.limits = limits or Limits()

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResults:
        reference, module, framework = self._example_fields(example)
        javascript = framework == "node:test"
        try:
            if javascript:
                made, candidates = js_mutants(reference, self.max_mutants, self.seed)
            else:
                made, candidates = mutants(reference, self.max_mutants, self.seed)
        except EvaluatorInputError as exc:
            raise EvaluatorInputError(f"example field {self.reference_key!r}: {exc}") from None
        try:
            language = get_language("javascript" if javascript else "python")
            tests = code_from_run(run, self.output_key, language)
        except CaseError as exc:
            return results_of(self.name, Outcome.no_tests(str(exc)), made, self.max_mutants > 0)
        started = time.monotonic()
        outcome = self._run(reference, tests, module, framework, made)
        outcome.details["mutant_candidates"] = candidates
        outcome.details["seconds"] = round(time.monotonic() - started, 3)
        return results_of(self.name, outcome, made, self.max_mutants > 0)

    def _example_fields(self, example: Example | None) -> tuple[str, str, str]:
        inputs = dict(example.inputs) if example is not None and example.inputs else {}
        outputs = dict(example.outputs) if example is not None and example.outputs else {}
        reference = inputs.get(self.reference_key, outputs.get(self.reference_key))
        if not isinstance(reference, str) or not reference.strip():
            raise EvaluatorInputError(
                f"{type(self).__name__} needs the reference implementation in "
                f"example.inputs[{self.reference_key!r}] (a non-empty string)"
            )
        module = str(inputs.get("module") or self.module)
        if not module.isidentifier() or module.startswith("test"):
            raise EvaluatorInputError(
                f"example.inputs['module'] must be a module name not starting with 'test', got {module!r}"
            )
        framework = str(inputs.get("framework") or self.framework)
        _check_framework(framework, "example.inputs['framework']")
        return reference, module, framework

    def _run(self, reference: str, tests: str, module: str, framework: str, made: list[Mutant]) -> Outcome:
        site = sandbox_site(TEST_TOOLS, required=TEST_TOOLS)
        pool = get_pool(site.config(self.sandbox_config))
        javascript = framework == "node:test"
        payload = {
            "site": site.path,
            "module": module,
            "module_file": f"{module}.js" if javascript else f"{module}.py",
            "test_file": f"{module}.test.js" if javascript else f"test_{module}_generated.py",
            "node": pool.runtime.node if javascript else None,
            "framework": framework,
            "reference": reference,
            "tests": tests,
            "mutants": [m.source for m in made],
            "coverage": True,
            "reference_timeout": self.reference_timeout,
            "mutant_timeout": self.mutant_timeout,
            "max_mutant_timeout": self.max_mutant_timeout,
        }
        script = SCRIPT.replace(PLACEHOLDER, f"PAYLOAD = json.loads({json.dumps(payload)!r})", 1)
        per_mutant = self.mutant_timeout or self.max_mutant_timeout
        timeout = self.reference_timeout + per_mutant * len(made) + 10.0
        done = pool.run_script(get_language("python"), script, timeout, self.limits)
        return Outcome.from_script(done, MARK, len(made))


def _check_framework(framework: str, where: str = "framework") -> None:
    if framework not in FRAMEWORKS:
        raise ValueError(f"{where} must be one of {', '.join(FRAMEWORKS)}, got {framework!r}")
