from __future__ import annotations

import pytest
from site_helpers import DOCS, SHIPPED, shipped_site

from bench.site import DeadEndError, parse_dead_end

GOOD = """---
date: 2026-11-30
experiment: eagle-fast-verify
status: abandoned
related_records: [20261130T231000Z-baseline-797fdbd]
error_signature: "boom"
decision: Stop.
---

# A title

Body.
"""


def test_parses_and_takes_the_title_from_the_heading() -> None:
    d = parse_dead_end(GOOD, "dead-ends/x.md")
    assert d.title == "A title"
    assert d.meta.status == "abandoned"
    assert d.slug == "x"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (("status: abandoned", "status: maybe"), "status"),
        (("date: 2026-11-30", "date: yesterday"), "date"),
        (("decision: Stop.\n", ""), "decision"),
        (("experiment: eagle-fast-verify", "experiment: Not A Slug"), "experiment"),
        (("error_signature", "error_sig"), "error_sig"),
        (("related_records: [20261130T231000Z-baseline-797fdbd]", "related_records: [x]"), "related_records[0]"),
    ],
)
def test_bad_front_matter_names_file_and_field(change: tuple[str, str], field: str) -> None:
    text = GOOD.replace(*change)
    with pytest.raises(DeadEndError) as info:
        parse_dead_end(text, "dead-ends/x.md", shown_path="docs/dead-ends/x.md")
    assert info.value.field == field
    assert str(info.value).startswith(f"docs/dead-ends/x.md: field '{field}':")


def test_missing_or_broken_front_matter() -> None:
    with pytest.raises(DeadEndError, match="front matter"):
        parse_dead_end("# no front matter\n", "dead-ends/x.md")
    with pytest.raises(DeadEndError, match="valid YAML"):
        parse_dead_end("---\ndate: [\n---\n", "dead-ends/x.md")


def test_shipped_dead_ends_are_valid_and_cite_shipped_records() -> None:
    site = shipped_site()
    assert not site.errors
    assert site.dead_ends, "docs/dead-ends/ has dead ends"
    for d in site.dead_ends:
        assert (DOCS / d.path).is_file()
        for rid in d.meta.related_records:
            assert list(SHIPPED.rglob(f"{rid}.json")), f"{d.path} cites {rid}, which is not under records/"


def test_dynamic_spec_disable_covers_the_lab_notes() -> None:
    text = (DOCS / "dead-ends" / "dynamic-spec-disable.md").read_text(encoding="utf-8")
    d = parse_dead_end(text, "dead-ends/dynamic-spec-disable.md")
    assert d.meta.error_signature == (
        "The size of tensor a (160) must match the size of tensor b (2) at non-singleton dimension 0"
    )
    assert set(d.meta.related_records) == {"20261130T231000Z-baseline-797fdbd", "20261130T231000Z-eagle3-339e97f"}
    for needle in (
        "out_cache_loc",
        "_draft_preprocess_decode",
        "prepare_for_decode",
        "CUDA graph",
        "10 requests × 16",
        "topk=1",
        "16 draft tokens to 3",
    ):
        assert needle in text
