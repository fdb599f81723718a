"""The CLI reference page, written from the argument parser itself so it cannot drift.

``python -m assay.cli.reference > docs/cli.md`` regenerates the page; a test checks that the
committed page equals what this module writes. Tables are built from the parser's actions,
not from ``format_help``, whose layout changes between Python versions and terminal widths.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

__all__ = ["main", "render"]

HEADER = """# CLI reference

Every `assay` command and option, generated from the argument parser
(`python -m assay.cli.reference > docs/cli.md`; a test checks the two agree).
`assay COMMAND --help` prints the same on a terminal.

## Exit codes

| code | meaning |
| --- | --- |
| 0 | the command succeeded; every gate passed |
| 1 | a gate failed (`--fail-under`, `--max-regression`) |
| 2 | a usage, data or setup error: a missing module or file, an extra not installed (the message names the `pip install`), a port in use, a typo in a name, a bad option (one line naming it) |
| 3 | the run itself failed (the target failed on every row, a lease is held elsewhere) |
| 130 | interrupted (Ctrl-C, SIGTERM); finished rows are kept, `--resume` continues |
"""


def render(parser: argparse.ArgumentParser) -> str:
    """The whole page: the exit codes, then one section per command and subcommand."""
    sections = [HEADER, *_sections(parser, level=2)]
    return "\n".join(sections).rstrip() + "\n"


def _sections(parser: argparse.ArgumentParser, level: int) -> Iterator[str]:
    yield f"{'#' * level} `{parser.prog}`\n"
    if parser.description:
        yield _one_paragraph(parser.description) + "\n"
    rows = [_row(action, parser) for action in parser._actions if _shown(action)]
    if rows:
        yield "| argument | help |\n| --- | --- |\n" + "\n".join(rows) + "\n"
    for name, child in _subcommands(parser):
        del name
        yield from _sections(child, level + 1)


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, child in action.choices.items():
                if id(child) not in seen:  # aliases point at the same parser
                    seen.add(id(child))
                    yield name, child


def _shown(action: argparse.Action) -> bool:
    if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
        return False
    return action.help != argparse.SUPPRESS


def _row(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    return f"| {_cell(_invocation(action))} | {_cell(_help(action, parser))} |"


def _invocation(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    metavar = _metavar(action)
    return ", ".join(f"`{flag}{' ' + metavar if metavar else ''}`" for flag in action.option_strings)


def _metavar(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if isinstance(action.metavar, tuple):
        return " ".join(action.metavar)
    name = action.metavar or action.dest.upper()
    return f"[{name}]" if action.nargs == "?" else name


def _help(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    text = action.help or ""
    if "%" in text:
        params = {**vars(action), "prog": parser.prog}
        if action.choices is not None:
            params["choices"] = ", ".join(str(choice) for choice in action.choices)
        text = text % params
    if action.choices is not None and "%(choices)" not in (action.help or ""):
        text += f" (one of: {', '.join(str(choice) for choice in action.choices)})"
    return _one_paragraph(text)


def _one_paragraph(text: str) -> str:
    return " ".join(text.split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def main() -> None:
    from assay.cli._main import _parser

    sys.stdout.write(render(_parser()))


if __name__ == "__main__":
    main()
