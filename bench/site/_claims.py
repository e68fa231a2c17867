"""Observed vs claimed on a record page, and the command that measures the record again (pure renderers).

A field listed in ``Record.claims`` (or under a listed parent) carries the value only the run config states: it
is shown with a visible "claimed" mark wherever the record page shows it. ``observed_section`` lists what the
server reported about itself, with the endpoint each fact came from; ``recipe_section`` the ``bench`` commands
that reproduce the record.
"""

from __future__ import annotations

import json
from typing import Any

from bench.compare import CLAIMED
from bench.json_indent import dumps_indent2
from bench.md_table import md_table
from bench.record.model import Record

from ._escape import md_code, md_code_block, md_text
from ._format import NOT_STATED
from ._markup import admonition

__all__ = ["CLAIMED", "claimed_mark", "observed_section", "recipe_section"]


_OBSERVED_LABELS = {
    "engine": "Engine",
    "version": "Version",
    "model": "Model",
    "tp_size": "Tensor parallel size",
    "dp_size": "Data parallel size",
    "speculative_algorithm": "Speculative algorithm",
    "speculative_num_steps": "Speculative steps",
    "speculative_topk": "Speculative topk",
    "speculative_num_draft_tokens": "Draft tokens",
    "draft_model": "Draft model",
    "allreduce_fusion": "Allreduce fusion",
    "attention_backend": "Attention backend",
    "parallel_slots": "Parallel slots",
}


def claimed_mark(record: Record, field: str) -> str:
    """`` *(claimed)*`` when ``field`` (dotted) is claimed, else an empty string."""
    return f" {CLAIMED}" if record.is_claimed(field) else ""


def _value(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return md_text(text if len(text) <= 200 else text[:199] + "…")


def observed_section(record: Record) -> str:
    """What the server reported, what only the config claims, and the mismatches kept."""
    obs = record.server.observed
    out = ["## Observed and claimed", ""]
    if obs is None:
        out.append(
            "The server was not asked what it is (a record measured before benchbook asked, or one transcribed or "
            "imported): every server fact on this page is the source's statement."
        )
    else:
        rows = []
        for name, label in _OBSERVED_LABELS.items():
            if name in obs.sources:
                rows.append([md_text(label), _value(getattr(obs, name)), md_code(obs.sources[name])])
        for name, value in sorted(obs.extra.items()):
            rows.append([md_code(name), _value(value), md_code(obs.sources.get(name, "?"))])
        out.append("What the server reported about itself, and where each fact was read:")
        out += ["", md_table(["Fact", "Reported", "Endpoint"], rows) if rows else "*It reported nothing.*", ""]
        asked = ", ".join(f"{md_code(p)} {s if s is not None else 'no answer'}" for p, s in obs.endpoints.items())
        out.append(f"Endpoints asked (HTTP status): {asked or NOT_STATED}.")
    out.append("")
    if record.claims:
        out.append(
            f"Claimed — only the run config states these; the server did not report them (marked {CLAIMED} on this "
            "page): " + ", ".join(md_code(c) for c in record.claims) + "."
        )
    elif obs is not None:
        out.append(
            "Nothing on this page is claimed: every server fact was reported by the server or launched by the harness."
        )
    if record.mismatches:
        body = [[md_code(m.field), _value(m.claimed), _value(m.observed)] for m in record.mismatches]
        table = md_table(["Field", "Config said", "Server reported (recorded)"], body)
        out += [
            "",
            admonition(
                "warning",
                "The server was not what the config said (measured with --allow-mismatch)",
                "The record states the server's values; the config's are kept here.\n\n" + table,
            ),
        ]
    return "\n".join(out) + "\n"


def recipe_section(record: Record) -> str:
    """The command that reproduces the record (``bench rerun``), the original command and the resolved config."""
    recipe = record.recipe
    if recipe is None:
        return ""
    lines = [
        "## Reproduce",
        "",
        "Measure the same configuration again (same levels, requests, warm-up and prompts):",
        "",
    ]
    lines += [md_code_block(f"bench rerun {record.id}", lang="bash"), ""]
    if recipe.command:
        lines += ["The command that produced this record:", "", md_code_block(recipe.command, lang="bash"), ""]
    if recipe.rerun_of:
        lines += [f"This record re-ran {md_code(recipe.rerun_of)}.", ""]
    config = dumps_indent2(recipe.config, sort_keys=True)
    title = "Resolved config" + (f" ({recipe.config_path} with the overrides)" if recipe.config_path else "")
    lines.append(admonition("note", md_text(title), md_code_block(config, lang="json"), collapsible=True))
    return "\n".join(lines) + "\n"
