"""``assay rescore NAME -e ...``: new evaluators over a stored experiment, the target not called."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from assay.cli._common import UsageError
from assay.cli._conclude import add_gate_arguments, conclude
from assay.cli._load import load_object
from assay.cli._run import add_evaluator_arguments, evaluator_from, parse_pairs


def add_parser(commands: Any, parent: argparse.ArgumentParser) -> None:
    rescore = commands.add_parser(
        "rescore",
        parents=[parent],
        help="score a stored experiment again with new evaluators",
        description="Run new evaluators over the stored outputs of EXPERIMENT (the target is "
        "not called) and store their results with it. Interrupted, run it again to resume.",
    )
    rescore.add_argument("experiment", help="the stored experiment's name or id")
    add_evaluator_arguments(rescore)
    rescore.add_argument(
        "--replace", action="store_true", help="replace results of an evaluator already present"
    )
    rescore.add_argument("--concurrency", type=int, metavar="N", help="rows in flight (default: 4 per CPU)")
    rescore.add_argument("--metadata", action="append", default=[], metavar="KEY=VALUE")
    add_gate_arguments(rescore)
    rescore.set_defaults(handler=rescore_command)


def rescore_command(args: argparse.Namespace) -> int:
    from assay.client import Client
    from assay.evaluation import evaluate_existing

    if not args.evaluators and not args.summary:
        raise UsageError("assay rescore needs at least one -e EVALUATOR or --summary MODULE:FUNCTION")
    evaluators = [evaluator_from(spec) for spec in args.evaluators]
    summaries = [load_object(spec, "summary evaluator") for spec in args.summary]
    tty = sys.stdout.isatty() and not args.json
    results = evaluate_existing(
        args.experiment,
        evaluators=evaluators,
        summary_evaluators=summaries,
        metadata=parse_pairs(args.metadata) or None,
        max_concurrency=args.concurrency or 0,
        client=Client(args.db),
        replace=args.replace,
        progress=tty,
    )
    return conclude(results, args, reported=tty)
