from __future__ import annotations

from site_helpers import BASELINE_ID, EAGLE_ID, FX_BASELINE_ID, FX_EAGLE_ID, fixture, shipped

from bench.site.compare import comparison_rows, comparison_table
from bench.site.metrics import COMPARE_METRICS, metric_spec


def test_transcribed_comparison_rows_and_ratio() -> None:
    table = comparison_table(shipped(BASELINE_ID), shipped(EAGLE_ID))
    lines = table.splitlines()
    assert lines[0] == "| Level | Figure | Better | baseline | eagle3 | eagle3 / baseline |"
    assert "| C=1 | Per\\-request tok/s \\(tok/s\\) | higher | 92.7 | 80.9 | 0.87× |" in lines
    saturation = [ln for ln in lines if ln.startswith("| saturation")]
    assert saturation == [
        "| saturation \\(concurrency not stated\\) | Total throughput \\(tok/s\\) | higher | ≈773 | ≈354 | ≈0.46× |"
    ]
    assert len(lines) == 4  # only the figures the notes state


def test_measured_comparison_has_latencies_and_missing_levels() -> None:
    specs = [metric_spec(k) for k in COMPARE_METRICS]
    rows = comparison_rows(fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID), specs)
    keys = {(lv.key, m.key) for lv, m, _, _ in rows}
    assert ("1", "ttft_p50") in keys and ("32", "tpot_p50") in keys
    # the partial EAGLE-3 run has no level 64: shown with a dash, not dropped
    c64 = [(m.key, fb, fc) for lv, m, fb, fc in rows if lv.key == "64"]
    assert c64 and all(fc is None for _, _, fc in c64)
    table = comparison_table(fixture(FX_BASELINE_ID), fixture(FX_EAGLE_ID))
    assert "| C&#61;64 |" not in table and "| C=64 | Output throughput \\(tok/s\\) | higher |" in table
    assert "| lower |" in table
