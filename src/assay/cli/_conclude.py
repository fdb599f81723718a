"""After a run or a re-score: the report, the gates' verdicts, the CI files, the exit code."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from assay.cli._common import GATE_FAILED, PASSED, RUN_FAILED, RunFailed, UsageError
from assay.cli._gates import (
    Verdict,
    check_errors,
    check_fail_under,
    parse_fail_under,
    parse_max_error_rate,
)
from assay.cli._outputs import json_payload, print_json, print_verdicts, write_outputs

if TYPE_CHECKING:
    from assay.evaluation import ExperimentResults
    from assay.report.errors import MetricErrors


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    gates = parser.add_argument_group("gates and CI outputs")
    gates.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="METRIC=N[@lower]",
        help="exit 1 when METRIC's mean (or, with @lower, its 95%% CI lower bound) is below N",
    )
    gates.add_argument(
        "--baseline", metavar="EXPERIMENT", help="experiment to compare with (--max-regression)"
    )
    gates.add_argument(
        "--max-regression",
        action="append",
        default=[],
        metavar="METRIC=D",
        help="exit 1 when METRIC is significantly worse than --baseline, by more than D",
    )
    gates.add_argument(
        "--max-error-rate",
        metavar="R",
        help="exit 1 when an evaluator errored on more than this share of its rows (0-1); "
        "without it, only an evaluator that errored on every row fails the run",
    )
    gates.add_argument(
        "--json", action="store_true", help="print results and gates as JSON (only JSON on stdout)"
    )
    gates.add_argument(
        "--junit-xml", metavar="PATH", help="write a JUnit XML file: one testcase per gate and failing row"
    )
    gates.add_argument(
        "--markdown", metavar="PATH", help="write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY)"
    )


def gate_verdicts_parse(args: argparse.Namespace) -> None:
    """Check the gates' syntax before a run, so a typo costs no model calls."""
    from assay.cli._regression import parse_max_regression

    for text in args.fail_under:
        parse_fail_under(text)
    parse_max_error_rate(getattr(args, "max_error_rate", None))
    for text in args.max_regression:
        parse_max_regression(text)
    if args.max_regression and not args.baseline:
        raise UsageError("--max-regression needs --baseline EXPERIMENT (the experiment to compare with)")
    if args.baseline and not args.max_regression:
        raise UsageError("--baseline needs at least one --max-regression METRIC=D (the tolerated drop)")


def gate_verdicts(
    results: ExperimentResults, args: argparse.Namespace, digest: list[MetricErrors]
) -> list[Verdict]:
    """Parse every gate before judging any, so a typo is reported as such."""
    fail_under = [parse_fail_under(text) for text in args.fail_under]
    max_error_rate = parse_max_error_rate(getattr(args, "max_error_rate", None))
    verdicts = [check_fail_under(results, gate) for gate in fail_under]
    verdicts += check_errors(digest, max_error_rate)
    if args.max_regression or args.baseline:
        from assay.cli._regression import check_regressions

        verdicts += check_regressions(results, args)
    return verdicts


def conclude(
    results: ExperimentResults,
    args: argparse.Namespace,
    *,
    reported: bool,
    extra: dict[str, Any] | None = None,
) -> int:
    """Print (unless already printed) and write everything; the exit code. ``extra``: more
    fields of the JSON payload (``assay show`` adds people's labels)."""
    from assay.report.errors import error_digest

    digest = error_digest(results)
    verdicts = gate_verdicts(results, args, digest)
    all_failed = len(results) > 0 and results.target_errors == len(results)
    code = RUN_FAILED if all_failed else (PASSED if all(v.passed for v in verdicts) else GATE_FAILED)
    if args.json:
        print_json({**json_payload(results, verdicts, code, digest), **(extra or {})})
    else:
        if not reported:
            from assay.report.plain import plain_report

            print(plain_report(results), flush=True)
        print_verdicts(verdicts)
    write_outputs(results, verdicts, digest, junit=args.junit_xml, markdown_path=args.markdown)
    if all_failed:
        first = next(row.run.error for row in results.rows if row.run.error)
        message = f"the target failed on all {len(results)} rows; the first error: {first}"
        if args.json:
            print(f"assay: error: {message}", file=sys.stderr)
            return code
        raise RunFailed(message)
    return code
