"""``bench``'s command line: every sub-command is wired to the module that owns its concept, and a module that
cannot be imported is an error, never a command silently missing from ``bench --help``."""

from __future__ import annotations

import pytest

import bench.cli
from bench.cli import COMMAND_MODULES, build_parser

OWNERS = {
    "validate": "bench.record.commands",
    "schema": "bench.record.commands",
    "run": "bench.runner.commands",
    "rerun": "bench.runner.rerun",
    "prompts": "bench.runner.prompt_commands",
    "render": "bench.site.commands",
    "check-offline": "bench.site.commands",
    "compare": "bench.compare.commands",
    "diff": "bench.compare.commands",
    "frame": "bench.dataframe",
    "check": "bench.gate.commands",
    "import": "bench.importers.commands",
    "submit": "bench.slurm.commands",
    "collect": "bench.slurm.commands",
}


def test_every_sub_command_is_handled_by_its_owner() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(OWNERS)  # type: ignore[arg-type]
    for name, owner in OWNERS.items():
        handler = sub.choices[name].get_default("handler")  # type: ignore[index]
        assert handler.__module__ == owner, name
    assert set(COMMAND_MODULES) == set(OWNERS.values())


def test_a_module_that_cannot_be_imported_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench.cli, "COMMAND_MODULES", (*COMMAND_MODULES, "bench.no_such_module"))
    with pytest.raises(ModuleNotFoundError, match=r"bench\.no_such_module"):
        build_parser()
