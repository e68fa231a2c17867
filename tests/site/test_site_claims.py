"""Observed vs claimed on the record page and in diffs; the command that reproduces a record."""

from __future__ import annotations

import json
from typing import Any

from site_helpers import FX_EAGLE_ID, fixture

from bench.compare import environment_diff, render_diff_json, render_diff_markdown, render_diff_text
from bench.record.model import Record
from bench.site import SITE_STYLE, record_markdown


def _attached(**update: Any) -> Record:
    """The fixture EAGLE-3 record as an attached run would have written it against a plain SmolLM2 server with
    --allow-mismatch: observed facts, claims, a kept mismatch, a recipe."""
    data = fixture(FX_EAGLE_ID).model_dump(mode="json")
    data["server"].update(
        command=None,
        url="http://gpu-node:30000",
        observed={
            "engine": "sglang",
            "version": "0.5.17",
            "model": "STAGE/smol",
            "tp_size": 1,
            "speculative_algorithm": "EAGLE3",
            "extra": {"max_running_requests": 48},
            "sources": {
                "engine": "/server_info",
                "version": "/server_info",
                "model": "/model_info",
                "tp_size": "/server_info",
                "speculative_algorithm": "/server_info",
                "max_running_requests": "/server_info",
            },
            "endpoints": {"/v1/models": 200, "/server_info": 200, "/model_info": 200},
        },
    )
    data["claims"] = ["model.name", "speculative.num_steps", "server.args.speculative-num-steps"]
    data["mismatches"] = [{"field": "model", "claimed": "meta-llama/Llama-3.1-8B-Instruct", "observed": "STAGE/smol"}]
    data["recipe"] = {
        "config": {"experiment": "eagle-fast-verify", "variant": "eagle3", "url": "http://gpu-node:30000"},
        "config_path": "bench/configs/eagle-fast-verify/eagle3.yaml",
        "overrides": ["url=http://gpu-node:30000"],
        "command": "bench run bench/configs/eagle-fast-verify/eagle3.yaml --set url=http://gpu-node:30000",
    }
    data.update(update)
    return Record.model_validate(data)


def _row(md: str, label: str) -> str:
    return next(line for line in md.splitlines() if line.startswith(f"| {label} |"))


def test_record_page_marks_claimed_fields_and_shows_what_the_server_reported() -> None:
    record = _attached()
    md = record_markdown(record)
    assert _row(md, "Model").endswith("*(claimed)* |")
    assert _row(md, "Speculative steps").endswith("*(claimed)* |")
    assert not _row(md, "Speculative decoding").endswith("*(claimed)* |")  # the server reported EAGLE3
    assert "| `speculative-num-steps` | 5 *(claimed)* |" in md
    assert "## Observed and claimed" in md
    assert "| Model | STAGE/smol | `/model_info` |" in md
    assert "| Tensor parallel size | 1 | `/server_info` |" in md
    assert "| `max_running_requests` | 48 | `/server_info` |" in md
    assert "`/v1/models` 200" in md
    assert "Claimed — only the run config states these" in md and "`speculative.num_steps`" in md
    assert '!!! warning "The server was not what the config said' in md
    assert "| `model` | meta\\-llama/Llama\\-3\\.1\\-8B\\-Instruct | STAGE/smol |" in md
    # the page says how to measure it again
    assert "## Reproduce" in md and f"bench rerun {record.id}" in md
    assert "bench run bench/configs/eagle-fast-verify/eagle3.yaml --set url=http://gpu-node:30000" in md
    # a record without these fields shows none of it
    plain = record_markdown(fixture(FX_EAGLE_ID))
    assert "(claimed)" not in plain and "## Observed and claimed" not in plain and "## Reproduce" not in plain


def test_bench_diff_marks_claimed_values_on_either_side() -> None:
    a = fixture(FX_EAGLE_ID)
    b = _attached()
    rows = {d.field: d for d in environment_diff(a, b)}
    assert rows["server.url"].claimed_b is False
    assert not any(f.startswith(("claims", "recipe.config")) for f in rows)  # marks, not rows
    b_claims_steps = _attached(speculative={**a.speculative.model_dump(), "num_steps": 3})  # type: ignore[union-attr]
    d = {x.field: x for x in environment_diff(a, b_claims_steps)}["speculative.num_steps"]
    assert (d.a, d.b, d.claimed_a, d.claimed_b) == (5, 3, False, True)
    diffs = environment_diff(a, b_claims_steps)
    assert "| `speculative.num_steps` | **context** | 5 | 3 *(claimed)* |" in render_diff_markdown(diffs)
    assert "3 (claimed)" in render_diff_text(diffs, width=200)
    as_json = {r["field"]: r for r in render_diff_json(diffs)}
    assert as_json["speculative.num_steps"]["claimed_b"] is True and "claimed_a" not in as_json["speculative.num_steps"]
    site = render_diff_markdown(diffs, "launched", "attached", SITE_STYLE)
    assert "| `speculative.num_steps` | **context** | 5 | 3 *(claimed)* |" in site
    assert "only the run config's statement" in site
    json.dumps(render_diff_json(diffs))  # stays JSON
