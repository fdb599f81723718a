"""``assay compare A B [--json] [--cluster-by KEY]``: the paired comparison of B against A."""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["add_parser", "run"]


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], store: argparse.ArgumentParser
) -> None:
    parser = commands.add_parser(
        "compare",
        parents=[store],
        help="compare experiment B against baseline A, paired by example (verdict per metric)",
    )
    parser.add_argument("a", metavar="A", help="the baseline experiment (name or id)")
    parser.add_argument("b", metavar="B", help="the experiment compared with it (name or id)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--cluster-by",
        metavar="KEY",
        help="example metadata key whose examples are not independent (e.g. a source document)",
    )
    parser.add_argument(
        "--test",
        choices=["t", "wilcoxon"],
        default="t",
        help="test for continuous metrics: paired t (default) or Wilcoxon signed-rank",
    )
    parser.add_argument(
        "--interval",
        choices=["t", "bca"],
        default="t",
        help="interval of a continuous difference: Student t (default) or BCa bootstrap",
    )
    parser.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        metavar="KEY",
        help="compare only this metric (repeatable)",
    )


def run(args: argparse.Namespace) -> int:
    from assay.client import Client
    from assay.comparison import compare
    from assay.report.terminal import print_comparison

    client = Client(args.db)
    try:
        comparison = compare(
            args.a,
            args.b,
            client=client,
            cluster_by=args.cluster_by,
            metrics=args.metrics,
            test=args.test,
            interval=args.interval,
        )
    finally:
        client.close()
    if args.json:
        json.dump(comparison.as_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_comparison(comparison)
    return 0
