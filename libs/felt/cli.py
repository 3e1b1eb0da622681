"""The `felt` command: one entry point, one module per subcommand in `felt.commands`.

Each module in `felt/commands/` defines `register(subparsers)`, which adds its parser and sets
`func` (taking the parsed arguments, returning an exit code) as the parser's default.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from felt import commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="felt", description="Felt, the poker backend.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"felt.commands.{module_info.name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
