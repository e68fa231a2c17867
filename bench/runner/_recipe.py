"""A record is a recipe: the resolved config and the command-line overrides that produced it (``Record.recipe``).

``recipe.config`` is the config after every override (``--set``, ``--levels``, ``--url``...), secrets redacted
(``bench.redact``); ``recipe.overrides`` the overrides as ``KEY=VALUE`` (the value as YAML); ``recipe.command``
the ``bench`` command line that produced the record. ``bench rerun RECORD_ID`` (``bench.runner.rerun``) measures
the same configuration again from ``recipe.config`` and names the record it re-ran in ``recipe.rerun_of``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from bench.record.model import Recipe
from bench.redact import REDACTED, redact_value

from .config import RunConfig

__all__ = ["ROOT", "make_recipe", "override_text", "redacted_fields", "rerun_command"]

ROOT = Path(__file__).resolve().parents[2]


def _yaml(value: Any) -> str:
    """The value as it would be written after ``--set KEY=``: bare when YAML reads it back unchanged."""
    if isinstance(value, str):
        try:
            if yaml.safe_load(value) == value and value.strip() == value and value:
                return value
        except yaml.YAMLError:
            pass
    return json.dumps(value, ensure_ascii=False)


def override_text(key: str, value: Any) -> str:
    """``KEY=VALUE`` for one override, the value redacted when the key names a secret or it looks like one."""
    shown = redact_value(key.rsplit(".", 1)[-1], value)
    return f"{key}={_yaml(shown)}"


def _config_path(path: Path | str | None) -> str | None:
    if path is None:
        return None
    p = Path(path)
    try:
        return p.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return p.as_posix()


def rerun_command(record_id: str, overrides: Sequence[str] = ()) -> str:
    return shlex.join(["bench", "rerun", record_id, *(a for o in overrides for a in ("--set", o))])


def make_recipe(
    cfg: RunConfig,
    *,
    config_path: Path | str | None,
    overrides: Sequence[tuple[str, Any]],
    rerun_of: str | None = None,
) -> Recipe:
    """The recipe of a run of ``cfg`` (the config as resolved, before a run group is stamped on it)."""
    texts = [override_text(k, v) for k, v in overrides]
    if rerun_of is not None:
        command = rerun_command(rerun_of, texts)
    else:
        flags = [a for o in texts for a in ("--set", o)]
        command = shlex.join(["bench", "run", _config_path(config_path) or "CONFIG", *flags])
    return Recipe(
        config=redact_value("config", cfg.model_dump(mode="json")),
        config_path=_config_path(config_path),
        overrides=texts,
        command=command,
        rerun_of=rerun_of,
    )


def redacted_fields(value: Any, prefix: str = "") -> list[str]:
    """Dotted names of the values in a config tree that were redacted when it was stored."""
    if isinstance(value, dict):
        return [f for k, v in value.items() for f in redacted_fields(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list):
        return [f for i, v in enumerate(value) for f in redacted_fields(v, f"{prefix}[{i}]")]
    return [prefix] if isinstance(value, str) and REDACTED in value else []
