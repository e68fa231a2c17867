"""Record pages and the levels CSV show each level's cache-hit share and both speculative figures with inputs."""

from __future__ import annotations

import csv
import io

from site_helpers import FX_EAGLE_ID, fixture

import bench
from bench.dataframe import frame_csv
from bench.record.model import Level, LevelSpeculative, Metric, PrefixCache, Record
from bench.site import record_markdown

# the two real NGRAM /generate responses of tests/runner/fixtures/sglang/, summed by hand
NGRAM = LevelSpeculative(
    accept_length=Metric(unit="tokens/step", formula="sum_output_tokens/sum_verify_steps", value=5.2632, n=2),
    acceptance_rate=Metric(unit="ratio", formula="sum_accepted_draft_tokens/sum_draft_tokens", value=0.601504, n=2),
    output_tokens=100,
    verify_steps=19,
    draft_tokens=133,
    accepted_tokens=80,
    requests=2,
    method="meta_info per request",
)
CACHE = PrefixCache(cached_tokens=46, input_tokens=94, hit_share=0.489362, requests=2, source="meta_info.cached_tokens")
CHAT_MISSING = LevelSpeculative(
    method="none: the chat stream carries no speculative field",
    missing=["accept_length: no verify-step count", "acceptance_rate: no draft counts"],
    requests=0,
)


def _record(*updates: dict[str, object]) -> Record:
    base = fixture(FX_EAGLE_ID)
    levels = [lv.model_copy(update=updates[i]) if i < len(updates) else lv for i, lv in enumerate(base.levels)]
    return base.model_copy(update={"levels": levels})


def _row(md: str, start: str) -> list[str]:
    line = next(line for line in md.splitlines() if line.startswith(start))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_record_page_shows_cache_hit_share_and_both_figures() -> None:
    record = _record({"speculative": NGRAM, "prefix_cache": CACHE}, {"speculative": CHAT_MISSING})
    md = record_markdown(record)
    assert "## Prefix cache, per level" in md
    assert _row(md.split("## Prefix cache, per level")[1], "| C=1") == [
        "C=1", "48.9%", "46", "94", "2", "meta\\_info\\.cached\\_tokens"
    ]  # fmt: skip
    levels_table = md.split("## Levels")[1].split("## ")[0]
    assert "Cache\\-hit share" in levels_table and "48.9%" in levels_table
    spec = md.split("## Speculative decoding, per level")[1].split("\n## ")[0]
    assert _row(spec, "| C=1")[:7] == ["C=1", "5.26 (n=2)", "100", "19", "0.602 (n=2)", "80", "133"]
    assert _row(spec, "| C=2")[:7] == ["C=2", "—", "—", "—", "—", "—", "—"]
    assert "- C=2: accept\\_length: no verify\\-step count" in spec
    assert "- C=2: acceptance\\_rate: no draft counts" in spec
    assert "never converted into the other" in spec


def test_record_page_says_when_no_level_reports_cached_tokens() -> None:
    md = record_markdown(_record())
    assert "## Prefix cache, per level" not in md
    assert "Not stated for any level of this record: Cache\\-hit share" in md
    # a measured schema-1 record: that harness sent prompts as written (update_to_2 states it)
    assert "| Prefix | repeated: prompts sent as written" in md and "| Prefix cache | not stated |" in md


def test_workload_prefix_and_cache_policy_rows() -> None:
    base = _record()
    workload = base.workload.model_copy(update={"prefix": "unique", "cache_policy": "SGLang radix cache on"})
    md = record_markdown(base.model_copy(update={"workload": workload}))
    assert "| Prefix | unique: every request opened with its own marker" in md
    assert "| Prefix cache | SGLang radix cache on |" in md


def test_levels_csv_lists_the_figures_and_their_inputs() -> None:
    df = bench.frame([_record({"speculative": NGRAM, "prefix_cache": CACHE})], intervals=False)
    rows = list(csv.DictReader(io.StringIO(frame_csv(df))))
    first, second = rows[0], rows[1]
    assert (first["accept_length"], first["acceptance_rate"]) == ("5.2632", "0.601504")
    assert (first["spec_output_tokens"], first["verify_steps"]) == ("100", "19")
    assert (first["draft_tokens"], first["accepted_tokens"]) == ("133", "80")
    assert (first["cache_hit_share"], first["cached_tokens"], first["cache_prompt_tokens"]) == ("0.489362", "46", "94")
    assert second["cache_hit_share"] == "" and second["accept_length"] == "3.0"
    assert Level.model_validate(Level.model_dump(_record().levels[0]))  # the fixture levels stay valid
