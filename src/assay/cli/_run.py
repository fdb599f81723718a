"""``assay run MODULE:TARGET --data ...`` (or ``assay run eval.toml``): an experiment from the shell."""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import Any

from assay._suggest import did_you_mean
from assay.cli._common import PASSED, RunFailed, UsageError
from assay.cli._conclude import add_gate_arguments, conclude, gate_verdicts_parse
from assay.cli._config import apply_config, find_pyproject, read_config
from assay.cli._load import load_object


def add_parser(commands: Any, parent: argparse.ArgumentParser) -> None:
    run = commands.add_parser(
        "run",
        parents=[parent],
        help="run a target over a dataset, score it, gate it",
        description="Run MODULE:TARGET over --data, score every row, store the experiment, "
        "check the gates. Or: assay run eval.toml, or [tool.assay] in ./pyproject.toml.",
    )
    run.add_argument("spec", nargs="?", help="MODULE:TARGET, or a .toml config file")
    run.add_argument("--data", help="dataset name or id in the store, or a .jsonl/.json/.csv file")
    add_evaluator_arguments(run)
    run.add_argument("--experiment", help="the experiment's name (default: PREFIX-<random>)")
    run.add_argument("--prefix", help="prefix of a generated experiment name")
    run.add_argument(
        "--resume", action="store_true", default=None, help="continue --experiment NAME where it stopped"
    )
    run.add_argument(
        "--retry-errors",
        action="store_true",
        help="with --resume: run again the evaluators whose results errored (the target is not "
        "called again; results that scored are kept); failed targets always run again on --resume",
    )
    run.add_argument(
        "--shard",
        metavar="I/N",
        help="run shard I of N (counting from 1, as Playwright and Jest do: 1/3, 2/3, 3/3) into "
        "--experiment NAME, shared by N processes or CI jobs; the experiment completes when every "
        "shard has",
    )
    run.add_argument(
        "--wait",
        action="store_true",
        help="if another process runs this shard (or experiment), wait for it instead of refusing",
    )
    run.add_argument("--repetitions", type=int, metavar="N", help="run every example N times (default 1)")
    run.add_argument("--concurrency", type=int, metavar="N", help="rows in flight (default 16)")
    run.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="stop starting rows once the judge calls cost this much (resume with a higher one)",
    )
    run.add_argument(
        "--metadata", action="append", default=[], metavar="KEY=VALUE", help="stored with the experiment"
    )
    add_gate_arguments(run)
    run.set_defaults(handler=run_command)


def add_evaluator_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-e",
        "--evaluator",
        dest="evaluators",
        action="append",
        default=[],
        metavar="MODULE:NAME|BUILTIN",
        help="a row evaluator: MODULE:FUNCTION, MODULE:Class, or a built-in name such as exact_match",
    )
    parser.add_argument(
        "--summary",
        action="append",
        default=[],
        metavar="MODULE:FUNCTION",
        help="a summary evaluator (over all rows)",
    )


def run_command(args: argparse.Namespace) -> int:
    from assay.client import Client
    from assay.errors import LeaseHeldError
    from assay.evaluation import evaluate

    _read_config_into(args)
    if not args.spec or not args.data:
        raise UsageError(
            "assay run needs MODULE:TARGET and --data DATASET (or a config file with target and data)"
        )
    if args.resume and not args.experiment:
        raise UsageError("--resume needs --experiment NAME (the experiment to continue)")
    if getattr(args, "retry_errors", False) and not args.resume:
        raise UsageError("--retry-errors goes with --resume --experiment NAME (the experiment to retry)")
    shard = _shard_of(args)
    gate_verdicts_parse(args)
    target = load_object(args.spec, "target")
    evaluators = [evaluator_from(spec) for spec in args.evaluators]
    summaries = [load_object(spec, "summary evaluator") for spec in args.summary]
    client = Client(args.db)
    if args.baseline:  # before the run: a mistyped baseline must not cost a run
        from assay.cli._browse import experiment_name

        experiment_name(client, args.baseline)
    tty = sys.stdout.isatty() and not args.json
    try:
        results = evaluate(
            target,
            data=args.data,
            evaluators=evaluators,
            summary_evaluators=summaries,
            experiment=args.experiment,
            experiment_prefix=args.prefix,
            metadata=parse_pairs(args.metadata),
            num_repetitions=args.repetitions or 1,
            max_concurrency=args.concurrency or 16,
            resume=bool(args.resume),
            retry_errors=bool(getattr(args, "retry_errors", False)),
            client=client,
            progress=tty,
            shard=shard,
            wait_for_lease=bool(getattr(args, "wait", False)),
            max_cost=args.max_cost,
        )
    except LeaseHeldError as exc:
        raise RunFailed(str(exc)) from None
    if shard is not None and shard[1] > 1 and not tty:  # a terminal run printed it with its report
        from assay.evaluation.shards import Shard, shard_line

        print(shard_line(client.store, results.experiment, Shard(*shard)), file=sys.stderr)
    if results.experiment.status == "partial":
        print(
            "assay: gates (--fail-under, --max-regression) are checked by the shard that finishes last",
            file=sys.stderr,
        )
        return PASSED
    return conclude(results, args, reported=tty)


def _shard_of(args: argparse.Namespace) -> tuple[int, int] | None:
    """``--shard I/N`` checked here, so that its errors name the flag."""
    from assay.errors import ShardError
    from assay.evaluation.shards import parse_shard

    if getattr(args, "shard", None) is None:
        return None
    try:
        shard = parse_shard(args.shard)
    except ShardError as exc:
        raise UsageError(str(exc)) from None
    if shard.count > 1 and not args.experiment:
        raise UsageError(
            f"--shard {args.shard} needs --experiment NAME: the experiment every shard writes into"
        )
    return (shard.index, shard.count)


def _read_config_into(args: argparse.Namespace) -> None:
    if args.spec and args.spec.endswith(".toml"):
        path = Path(args.spec)
        args.spec = None
        apply_config(args, read_config(path))
    elif not args.spec:
        apply_config(args, read_config(find_pyproject()))
    if args.spec is None:
        args.spec = getattr(args, "target", None)


def evaluator_from(spec: str) -> Any:
    """``MODULE:NAME`` is imported (a class is instantiated); anything else is a built-in name."""
    from assay.evaluation.evaluator import EVALUATOR_NAMES

    if ":" in spec:
        evaluator = load_object(spec, "evaluator")
        if inspect.isclass(evaluator):
            try:
                return evaluator()
            except TypeError as exc:
                raise UsageError(f"evaluator {spec!r}: cannot create it with no arguments: {exc}") from None
        return evaluator
    if spec not in EVALUATOR_NAMES:
        raise UsageError(
            f"unknown evaluator {spec!r}{did_you_mean(spec, EVALUATOR_NAMES)}: pass MODULE:NAME or a "
            f"built-in name ({', '.join(sorted(EVALUATOR_NAMES))})"
        )
    return spec


def parse_pairs(pairs: list[str]) -> dict[str, str]:
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--metadata {pair!r} must be KEY=VALUE")
        parsed[key] = value
    return parsed
