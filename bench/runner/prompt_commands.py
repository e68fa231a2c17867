"""``bench prompts`` (list the shipped prompt sets) and ``bench prompts show NAME`` (show one)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bench.record.errors import RecordError

from .prompts import Prompt, PromptSet, list_prompt_sets, load_prompt_set

__all__ = ["format_listing", "format_set", "register"]

_PREVIEW = 100


def _one_line(text: str, width: int = _PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def format_listing(sets: list[PromptSet]) -> str:
    """One row per set: name, prompt count, content hash."""
    if not sets:
        return "no prompt sets\n"
    width = max(len(s.name) for s in sets)
    lines = [f"{'name':<{width}}  {'prompts':>7}  hash"]
    for s in sets:
        lines.append(f"{s.name:<{width}}  {len(s.prompts):>7}  {s.content_hash}")
    return "\n".join(lines) + "\n"


def _roles(prompt: Prompt) -> str:
    return ",".join(m.role for m in prompt.messages)


def format_set(prompt_set: PromptSet, *, full: bool = False) -> str:
    """The set's metadata and hash, then each prompt (a one-line preview of its last user message, or all)."""
    out = [
        f"name:        {prompt_set.name}",
        f"prompts:     {len(prompt_set.prompts)}",
        f"hash:        {prompt_set.content_hash}",
        f"license:     {prompt_set.license}",
        f"source:      {prompt_set.source}",
        f"description: {prompt_set.description}",
    ]
    if prompt_set.path is not None:
        out.append(f"file:        {prompt_set.path}")
    out.append("")
    for p in prompt_set.prompts:
        if full:
            out.append(f"== {p.id}")
            for m in p.messages:
                out.append(f"[{m.role}]")
                out.append(m.content)
            out.append("")
        else:
            out.append(f"{p.id}  ({_roles(p)})  {_one_line(p.messages[-1].content)}")
    return "\n".join(out).rstrip("\n") + "\n"


def _list(args: argparse.Namespace) -> int:
    try:
        sets = [load_prompt_set(name) for name in list_prompt_sets()]
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(format_listing(sets))
    return 0


def _show(args: argparse.Namespace) -> int:
    try:
        prompt_set = load_prompt_set(args.name)
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(format_set(prompt_set, full=args.full))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("prompts", help="list the prompt sets, or show one", description=__doc__)
    p.set_defaults(handler=_list)
    actions = p.add_subparsers(dest="prompts_action", metavar="ACTION")
    show = actions.add_parser("show", help="show one prompt set (validates it)")
    show.add_argument("name", help="a shipped set's name or a path to a .jsonl file")
    show.add_argument("--full", action="store_true", help="print every message in full")
    show.set_defaults(handler=_show)
