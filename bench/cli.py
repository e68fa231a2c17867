"""``bench``: the command line. Each sub-command lives in the module that owns its concept;
this file only wires them together (``register(subparsers)`` + a handler)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# sub-command name -> module providing register(subparsers) -> None
COMMANDS: dict[str, str] = {
    "validate": "bench.record.commands",
    "schema": "bench.record.commands",
    "run": "bench.runner.commands",
    "rerun": "bench.runner.rerun",
    "prompts": "bench.runner.prompt_commands",
    "render": "bench.site.commands",
    "compare": "bench.compare.commands",
    "diff": "bench.compare.commands",
    "check": "bench.gate.commands",
    "import": "bench.importers.commands",
    "submit": "bench.slurm.commands",
    "collect": "bench.slurm.commands",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench", description="benchbook: honest LLM-serving benchmark records")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in dict.fromkeys(COMMANDS.values()):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not module_name.startswith(exc.name):
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
