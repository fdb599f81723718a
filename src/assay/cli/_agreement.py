"""``assay agreement EXPERIMENT --judge KEY --human KEY``: how well a judge agrees with people."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(commands: Any, parent: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "agreement",
        parents=[parent],
        help="a judge's agreement with human labels: accuracy, kappa, Spearman, with 95%% intervals",
    )
    parser.add_argument("experiment", help="the experiment (name or id)")
    parser.add_argument(
        "--judge", required=True, metavar="KEY", help="the judge's result key (or outputs.FIELD)"
    )
    parser.add_argument(
        "--human", required=True, metavar="KEY", help="the human feedback key (or reference.FIELD)"
    )
    parser.add_argument("--against", metavar="KEY", help="a second judge's key, compared on the same rows")
    parser.add_argument(
        "--against-experiment",
        metavar="NAME",
        help="where the second judge ran (default: the same experiment)",
    )
    parser.add_argument("--scale", choices=["nominal", "ordinal", "continuous"], help="default: detected")
    parser.add_argument(
        "--weights",
        choices=["none", "linear", "quadratic"],
        default="quadratic",
        help="kappa weights when ordinal",
    )
    parser.add_argument(
        "--any-source",
        action="store_true",
        help="count any created feedback as human, not only source 'human'",
    )
    parser.add_argument(
        "--top", type=int, default=10, metavar="N", help="disagreeing rows listed (default 10)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from assay.agreement import judge_agreement
    from assay.client import Client

    client = Client(args.db)
    try:
        report = judge_agreement(
            args.experiment,
            args.judge,
            args.human,
            against=args.against,
            against_experiment=args.against_experiment,
            scale=args.scale,
            weights=args.weights,
            human_source=None if args.any_source else "human",
            top=args.top,
            client=client,
        )
    finally:
        client.close()
    if args.json:
        json.dump(report.as_dict(), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        print(report)
    return 0
