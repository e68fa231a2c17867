"""``bench``: the command line. Each sub-command lives in the module that owns its concept;
this file only wires them together (``register(subparsers)`` + a handler)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# the modules whose register(subparsers) adds their sub-commands, in the order --help lists them
COMMAND_MODULES: tuple[str, ...] = (
    "bench.record.commands",  # validate, schema
    "bench.runner.commands",  # run
    "bench.runner.rerun",  # rerun
    "bench.runner.prompt_commands",  # prompts
    "bench.site.commands",  # render, check-offline
    "bench.compare.commands",  # compare, diff
    "bench.dataframe",  # frame
    "bench.gate.commands",  # check
    "bench.importers.commands",  # import
    "bench.slurm.commands",  # submit, collect
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench", description="benchbook: honest LLM-serving benchmark records")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
