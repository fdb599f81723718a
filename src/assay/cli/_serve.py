"""``assay serve-evaluators``: the command; the server and its evaluators load only when it runs.

assay serve-evaluators my_evals:EVALUATORS [--host 127.0.0.1] [--port 8766] [--token T]
assay serve-evaluators --builtin [code_correctness,exact_match]
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["COMMAND", "add_parser", "main"]

COMMAND = "serve-evaluators"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the command to an ``add_subparsers()`` object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        COMMAND,
        help="serve named evaluators over HTTP (for RemoteEvaluator)",
        description="Serve named evaluators over HTTP; call them with "
        "assay.service.RemoteEvaluator(url, name). OpenAPI document at /openapi.json.",
    )
    parser.add_argument(
        "evaluators",
        nargs="?",
        metavar="MODULE:EVALUATORS",
        help="a dict (name -> evaluator) or list of evaluators in a module importable from "
        "the current directory, e.g. my_evals:EVALUATORS",
    )
    parser.add_argument(
        "--builtin",
        nargs="?",
        const="",
        metavar="NAMES",
        help="serve the built-in evaluators that are safe remotely (no model, no host file), "
        "or the comma-separated NAMES (e.g. code_correctness,exact_match)",
    )
    parser.add_argument(
        "--allow-model-calls",
        action="store_true",
        help="with --builtin NAMES: also serve judges and embedding_distance, which call the "
        "model configured in the server's environment (its credentials, its bill) with the "
        "caller's text",
    )
    parser.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (loopback)")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--token", help="required for a non-loopback host (or set ASSAY_SERVICE_TOKEN)")
    parser.add_argument("--max-body-bytes", type=int, default=None, help="request size limit (default 8 MiB)")
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=None,
        help="evaluations running at once before the service answers 429 (default 64)",
    )
    return parser


def main(args: argparse.Namespace) -> int:
    """Run the command; errors (bad spec, unsafe settings) raise ``AssayError``s/``ValueError``s."""
    from assay.errors import EvaluatorSpecError
    from assay.service.app import DEFAULT_MAX_IN_FLIGHT
    from assay.service.guard import DEFAULT_MAX_BODY_BYTES
    from assay.service.registry import load_evaluators, named_evaluators
    from assay.service.server import check_settings, serve

    check_settings(args.host, args.token)  # before importing the user's module
    if (args.evaluators is None) == (args.builtin is None):
        raise EvaluatorSpecError("serve-evaluators needs exactly one of MODULE:EVALUATORS or --builtin")
    if args.builtin is not None:
        from assay.service.builtins import builtin_evaluators

        names = [name.strip() for name in args.builtin.split(",") if name.strip()]
        evaluators = named_evaluators(
            builtin_evaluators(names, allow_model_calls=args.allow_model_calls), "--builtin"
        )
    else:
        evaluators = load_evaluators(args.evaluators)
    serve(
        evaluators,
        host=args.host,
        port=args.port,
        token=args.token,
        max_body_bytes=args.max_body_bytes or DEFAULT_MAX_BODY_BYTES,
        max_in_flight=args.max_in_flight or DEFAULT_MAX_IN_FLIGHT,
    )
    return 0
