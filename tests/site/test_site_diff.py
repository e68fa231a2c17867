from __future__ import annotations

from site_helpers import FX_BASELINE_ID, FX_EAGLE_ID, HOSTILE_ID, fixture

from bench.compare import environment_diff, render_diff_markdown
from bench.record.model import Record
from bench.site import SITE_STYLE


def diff_table(a: Record, b: Record, label_a: str, label_b: str) -> str:
    return render_diff_markdown(environment_diff(a, b), label_a, label_b, SITE_STYLE)


def test_diff_table_lists_every_differing_field_context_first() -> None:
    a, b = fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID)
    md = diff_table(a, b, "baseline", "eagle3")
    rows = [ln for ln in md.splitlines() if ln.startswith("| `")]
    assert len(rows) == len(environment_diff(a, b))
    assert "| `speculative.algorithm` | **context** | *not stated* | EAGLE3 |" in md
    assert "| `draft_model.name` | **context** | *not stated* | jamesliu1/sglang\\-EAGLE3" in md
    roles = [ln.split(" | ")[1] for ln in rows]
    assert roles == sorted(roles, key=lambda r: r != "**context**")
    assert md.startswith(f"{len(rows)} field(s) differ")


def test_identical_records_and_hostile_values() -> None:
    a = fixture(FX_BASELINE_ID)
    assert "do not differ in any field" in diff_table(a, a, "a", "b")
    md = diff_table(a, fixture(HOSTILE_ID), "a", "b")
    assert "<svg" not in md and "&lt;svg onload" in md
