"""History pages: a configuration's records over time, with bench.compare's flags (insufficient data shown as such)."""

from __future__ import annotations

from site_helpers import FX_BASELINE_ID, fixture, fixture_site, site_of, with_figures

from bench.compare import config_key
from bench.site import history_index, history_markdown, site_record_markdown
from bench.site._paths import history_page

BASE = fixture(FX_BASELINE_ID)


def _ids(n: int) -> list[str]:
    return [f"20261203T0{i}0000Z-baseline-abcdef{i}" for i in range(n)]


def test_too_few_records_read_insufficient_data_never_fine() -> None:
    recs = [with_figures(BASE, rid, 1.0, minutes=60 * i) for i, rid in enumerate(_ids(2))]
    site = site_of(*recs)
    (key,) = site.configurations
    md = history_markdown(site, key)
    assert "**Status:**" in md and "insufficient data" in md
    assert "no lasting change" not in md and "No lasting change" not in md
    assert "| insufficient data | total throughput |" in md
    assert "with fewer than 3 earlier records the answer is *insufficient data*" in md


def test_a_lasting_step_is_flagged_at_the_record_where_it_starts() -> None:
    factors = [1.0, 1.0, 1.01, 0.99, 0.8, 0.8]  # throughput drops by 20% and stays down
    recs = [with_figures(BASE, rid, f, minutes=60 * i) for i, (rid, f) in enumerate(zip(_ids(6), factors, strict=True))]
    site = site_of(*recs)
    (key,) = site.configurations
    md = history_markdown(site, key)
    step = recs[4].id
    flagged = [ln for ln in md.splitlines() if ln.startswith("| **regression** | total throughput |")]
    assert flagged and all(f"{step.replace('-', chr(92) + '-')}" in ln for ln in flagged)
    assert "| 0.80× |" in flagged[0]
    # latencies scaled by 0.8 are faster: an improvement, found by the same rule
    assert "| **improvement** | TTFT |" in md
    # newest first, every level of the series as a column
    table = md.split("### Total throughput (tok/s), by level", 1)[1]
    assert table.index(recs[5].id.replace("-", "\\-")) < table.index(recs[0].id.replace("-", "\\-"))
    assert "| C=1 | C=2 |" in table


def test_record_page_links_its_history_and_diffs_against_the_previous_record() -> None:
    first = with_figures(BASE, _ids(2)[0], 1.0)
    data = with_figures(BASE, _ids(2)[1], 1.0, minutes=60).model_dump(mode="json", exclude_none=True)
    data["environment"]["gpu"]["driver"] = "590.0"  # info: same configuration
    from bench.record.model import Record

    second = Record.model_validate(data)
    site = site_of(first, second)
    key = config_key(second)
    page = site_record_markdown(site, second)
    assert f"]({history_page(key).removeprefix('history/')})" not in page  # links are relative to the page
    assert f"[history of this configuration](../../{history_page(key)})" in page
    assert "| `environment.gpu.driver` | info | 580\\.95\\.05 | 590\\.0 |" in page
    assert "First record of this configuration" in site_record_markdown(site, first)


def test_history_index_lists_every_configuration_with_its_status() -> None:
    site = fixture_site()
    md = history_index(site)
    for key in site.configurations:
        assert f"]({history_page(key).removeprefix('history/')})" in md
    assert "insufficient data" in md
