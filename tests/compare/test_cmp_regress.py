from __future__ import annotations

from cmp_fixtures import later, record

from bench.compare import config_key, flags, history, regression_flags
from bench.record.model import Record
from bench.settings import RegressionThresholds

TH = RegressionThresholds(ratio_threshold=0.05, window=5, min_history=3)


def _run(i: int, tok_s: float, variant: str = "baseline", **overrides: object) -> Record:
    lv = {
        "concurrency": 1,
        "requests_completed": 30,
        "per_request_tok_s": {"unit": "tok/s", "formula": "per_request_tok_s", "mean": tok_s},
    }
    return record(variant, [lv], when=later(i), suffix=f"{i:07x}", overrides=dict(overrides))


def _hist(values: list[float]) -> list[Record]:
    return [_run(i, v) for i, v in enumerate(values)]


def _kinds(fl: list) -> list[tuple[str, str, str, str]]:
    return [(f.kind, f.metric, f.level, f.record_id[-7:]) for f in fl]


def test_stable_history_has_no_flags() -> None:
    assert flags(_hist([100, 101, 99, 100, 102, 98, 100]), TH) == []


def test_a_single_outlier_is_not_flagged() -> None:
    assert flags(_hist([100, 101, 99, 100, 70, 100, 101]), TH) == []


def test_a_persistent_step_is_flagged_once_where_it_starts() -> None:
    got = flags(_hist([100, 101, 99, 100, 80, 81, 79, 80]), TH)
    assert _kinds(got) == [("regression", "per_request_tok_s", "1", f"{4:07x}")]
    f = got[0]
    assert f.confirmed_by is not None and f.confirmed_by.endswith(f"{5:07x}")
    assert f.window_median == 100.0 and f.ratio == 0.8
    assert "0.80× the median of the previous 4 record(s)" in f.message and "confirmed by" in f.message


def test_an_improvement_is_named_as_such_and_lower_is_better_for_latency() -> None:
    assert _kinds(flags(_hist([100, 100, 100, 100, 130, 131]), TH))[0][0] == "improvement"
    runs = []
    for i, ttft in enumerate([50, 50, 50, 50, 70, 71]):
        lv = {"concurrency": 1, "ttft_ms": {"unit": "ms", "formula": "ttft", "mean": ttft}}
        runs.append(record("baseline", [lv], when=later(i), suffix=f"{i:07x}"))
    assert _kinds(flags(runs, TH)) == [("regression", "ttft_ms", "1", f"{4:07x}")]


def test_short_history_is_insufficient_data_never_fine() -> None:
    got = flags(_hist([100, 101, 99]), TH)
    assert [(f.kind, f.record_id[-7:]) for f in got] == [("insufficient_data", f"{2:07x}")]
    assert "2 earlier comparable record(s)" in got[0].message and "3 needed" in got[0].message
    assert flags(_hist([100]), TH)[0].kind == "insufficient_data"


def test_a_deviating_newest_record_is_unconfirmed() -> None:
    got = flags(_hist([100, 101, 99, 100, 80]), TH)
    assert _kinds(got) == [("unconfirmed", "per_request_tok_s", "1", f"{4:07x}")]


def test_window_limits_the_baseline() -> None:
    # with window=2 the old level is forgotten quickly: a slow drift is compared with recent records only
    th = RegressionThresholds(ratio_threshold=0.05, window=2, min_history=2)
    assert flags(_hist([100, 98, 96, 94, 92, 90]), th) == []
    assert flags(_hist([100, 98, 96, 94, 92, 90]), TH) != []


def test_history_groups_by_configuration_and_orders_by_time() -> None:
    recs = [_run(3, 100), _run(1, 100), _run(2, 100, variant="eagle3"), _run(0, 100, **{"environment.gpu.count": 4})]
    h = history(recs)
    assert len(h) == 3
    key = config_key(recs[0])
    assert key.startswith("baseline@")
    assert [r.id[-7:] for r in h[key]] == [f"{1:07x}", f"{3:07x}"]
    assert set(regression_flags(recs)) == set(h)


def test_each_series_holds_what_series_figure_reads_of_every_record() -> None:
    """The series the flags are read from: per figure and level, each record's figure as ``series_figure`` finds it
    (None where the record lacks the level, where it failed, or where the level does not state the figure)."""
    from bench.compare import series_figure
    from bench.compare._regress import _series
    from bench.figures import figure

    def level(c: int, tok_s: float, *, failed: bool = False, ttft: float | None = None) -> dict[str, object]:
        lv: dict[str, object] = {
            "concurrency": c,
            "requests_completed": 30,
            "per_request_tok_s": {"unit": "tok/s", "formula": "per_request_tok_s", "mean": tok_s},
            "failure": "error rate above the threshold" if failed else None,
        }
        if ttft is not None:
            lv["ttft_ms"] = {"unit": "ms", "formula": "ttft_ms", "mean": ttft, "p50": ttft, "p99": 2 * ttft}
        return lv

    runs = [
        record("baseline", [level(1, 100.0), level(4, 50.0, ttft=20.0)], when=later(0), suffix="0000000"),
        record("baseline", [level(1, 90.0, failed=True), level(4, 55.0)], when=later(1), suffix="0000001"),
        record("baseline", [level(4, 60.0, ttft=25.0), level(16, 30.0)], when=later(2), suffix="0000002"),
    ]
    series = _series(runs)
    by_level = {k[1] for k in series}
    assert len(by_level) == 3  # C=1, C=4 and C=16, each stated (not failed) by some record
    for (key, level_key), values in series.items():
        assert values == [series_figure(r, figure(key), level_key) for r in runs], (key, level_key)
    c1 = next(v for k, v in series.items() if k[0] == "per_request_tok_s" and k[1] == runs[0].levels[0].key)
    assert c1 == [100.0, None, None]  # failed in the second run, absent in the third
