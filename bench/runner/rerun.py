"""``bench rerun RECORD_ID``: measure a record's configuration again, from the recipe the record keeps.

The config is rebuilt from ``recipe.config`` (``--set``, ``--url`` change it; the levels, the request and
warm-up policy and the prompt set are kept: a different plan is another ``bench run``). The prompt set must
still hash to the record's ``workload.prompt_set_hash``, or nothing runs. A value redacted in the stored config
(a secret) must be given again with ``--set``. The new record names the one it re-ran in ``recipe.rerun_of``.

Exit status as ``bench run``; 2 for an unknown record, a record without a recipe, a changed prompt set or a
forbidden override (nothing written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bench.errors import FieldError
from bench.record.load import load_records
from bench.record.model import Record

from ._recipe import make_recipe, redacted_fields
from .commands import add_allow_mismatch, measure_as_asked, preflight
from .config import ConfigError, apply_overrides, parse_config, parse_set, url_problem
from .engines import get_engine
from .engines.modelfile import ModelFileError
from .measure import EXIT_USAGE
from .prompts import PromptSetError, load_prompt_set

__all__ = ["PLAN_FIELDS", "RerunError", "find_record", "register", "rerun_config"]

PLAN_FIELDS = ("levels", "requests_per_level", "min_requests", "warmup", "max_warmup", "prompt_set")
"""What a rerun keeps from the record: the sweep's plan and its prompts."""


class RerunError(FieldError):
    """A record that cannot be re-run as asked: names the record, the field and what was expected."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "rerun",
        help="measure a record's configuration again (same levels, requests, warm-up and prompts)",
        description="Rebuild the config a record was measured with (its recipe) and measure it again.",
    )
    p.add_argument("record_id", help="the record to measure again (an id, or a unique prefix of one)")
    p.add_argument(
        "--set", action="append", default=[], metavar="KEY.PATH=VALUE", help="override a config value (YAML value)"
    )
    p.add_argument("--url", help="attach to this running server (default: what the record's config says)")
    p.add_argument("--records-dir", default="records", help="where the record is found and the new one written")
    p.add_argument("--log-dir", help="server logs (default: ~/.cache/benchbook/logs)")
    p.add_argument("--repeat", type=int, default=1, metavar="N", help="measure N times (records share a run_group)")
    add_allow_mismatch(p)
    p.set_defaults(handler=_handle)


def find_record(ref: str, root: Path) -> Record:
    """The record with id ``ref`` (or the one id starting with it) under ``root``."""
    if not root.is_dir():
        raise RerunError("--records-dir", str(root), "an existing records folder")
    by_id = load_records(root).by_id
    matches = [ref] if ref in by_id else sorted(i for i in by_id if i.startswith(ref))
    if len(matches) != 1:
        found = f"ids {', '.join(matches)}" if matches else "no such id"
        raise RerunError(root, ref, f"the id of one record ({found})")
    return by_id[matches[0]].record


def rerun_config(record: Record, overrides: list[tuple[str, Any]]) -> dict[str, Any]:
    """The record's stored config with ``overrides`` applied (plan fields refused, redacted values named)."""
    where = f"record {record.id}"
    if record.recipe is None:
        raise RerunError(where, "recipe", "a recipe (records measured before recipes were kept cannot be re-run)")
    for key, _ in overrides:
        if key.split(".")[0] in PLAN_FIELDS:
            raise ConfigError(
                "--set", key, "a field a rerun may change: levels, requests, warm-up and prompt set are the record's"
            )
    data = apply_overrides(record.recipe.config, overrides)
    hidden = redacted_fields(data)
    if hidden:
        raise RerunError(
            where,
            f"recipe.config.{hidden[0]}",
            f"a value: it was redacted when the record was written; give it again with --set {hidden[0]}=VALUE",
        )
    return data


def _handle(args: argparse.Namespace) -> int:
    try:
        record = find_record(args.record_id, Path(args.records_dir))
        overrides = [parse_set(item) for item in args.set]
        if args.url:
            if url_problem(args.url) is not None:
                raise ConfigError("--url", "url", str(url_problem(args.url)))
            overrides.append(("url", args.url))
        overrides.append(("records_dir", args.records_dir))
        cfg = parse_config(rerun_config(record, overrides), f"record {record.id}: recipe.config")
        engine = get_engine(cfg.engine)
        try:
            prompt_set = load_prompt_set(cfg.prompt_set)
        except PromptSetError as exc:  # it names the set's file, line and field
            raise RerunError(
                f"record {record.id}", "recipe.config.prompt_set", f"a loadable prompt set ({exc})"
            ) from None
        if prompt_set.content_hash != record.workload.prompt_set_hash:
            raise RerunError(
                f"prompt set {cfg.prompt_set!r}",
                "content hash",
                f"{record.workload.prompt_set_hash} as when record {record.id} was measured, got "
                f"{prompt_set.content_hash}: the prompts changed, so a rerun would measure another workload",
            )
        raised = preflight(cfg, args.repeat, "--records-dir")
    except (FieldError, ModelFileError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    user_overrides = [o for o in overrides if o[0] != "records_dir"]
    config_path = record.recipe.config_path if record.recipe else None
    recipe = make_recipe(cfg, config_path=config_path, overrides=user_overrides, rerun_of=record.id)
    return measure_as_asked(args, cfg, engine, prompt_set, recipe=recipe, note=raised)
