"""The benchmark scripts' result files, defined once (bench.benchmark_results): each script writes its own format,
checked before the file is replaced, and the Performance page reads each file only as that format."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cold_floor  # noqa: E402
import site_build  # noqa: E402

from bench.benchmark_results import (  # noqa: E402
    CLIENT_SCALING,
    CLIENTS,
    COLD_FLOOR,
    RESULT_FILES,
    SITE_BUILD,
    result_error,
    result_head,
    save_result,
)
from bench.site import load_results  # noqa: E402


def test_every_result_file_names_a_script_of_the_repository_that_uses_its_format() -> None:
    for fmt in RESULT_FILES.values():
        script = ROOT / fmt.script
        assert script.is_file(), fmt.script
        assert f"result_head({_NAMES[fmt.kind]})" in script.read_text(encoding="utf-8"), fmt.script
    assert len({fmt.kind for fmt in RESULT_FILES.values()}) == 4


_NAMES = {f.kind: name for name, f in [("SITE_BUILD", SITE_BUILD), ("COLD_FLOOR", COLD_FLOOR), ("CLIENTS", CLIENTS),
                                        ("CLIENT_SCALING", CLIENT_SCALING)]}  # fmt: skip


def test_a_result_is_written_whole_and_read_back_as_its_format(tmp_path: Path) -> None:
    path = tmp_path / "results" / "clients.json"
    result = result_head(CLIENTS) | {"date": "2026-12-04T23:00:00Z", "machine": {"cores": 2}, "summary": []}
    save_result(path, CLIENTS, result)
    assert json.loads(path.read_text(encoding="utf-8")) == result
    assert result_error(json.loads(path.read_text(encoding="utf-8")), CLIENTS) is None
    assert [p.name for p in path.parent.iterdir()] == ["clients.json"]  # no temporary file left


@pytest.mark.parametrize(
    ("result", "error"),
    [
        ({"kind": "benchbook-clients-side-by-side", "version": 1, "summary": {}},
         "field 'summary': a JSON list (got an object)"),
        ({"version": 1}, "field 'kind': \"benchbook-cold-floor\", what benchmarks/cold_floor.py writes (got missing)"),
        ({"kind": "benchbook-cold-floor"}, "field 'version': 1, the format version this benchbook reads (got missing)"),
    ],
)  # fmt: skip
def test_a_script_that_drifts_from_its_format_writes_nothing(tmp_path: Path, result: dict, error: str) -> None:
    """A result not of its format is a bug of the script that made it: the error names the file and the field, and
    the file already there is left as it was."""
    fmt = CLIENTS if result.get("kind") == CLIENTS.kind else COLD_FLOOR
    path = tmp_path / "result.json"
    path.write_text("the last run's result\n", encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        save_result(path, fmt, result)
    assert str(caught.value) == f"{path}: not a {fmt.kind} result, as {fmt.script} should write it: {error}"
    assert path.read_text(encoding="utf-8") == "the last run's result\n"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_each_format_version_is_read_only_as_itself() -> None:
    good = result_head(SITE_BUILD) | {"rows": []}
    assert result_error(good, SITE_BUILD) is None
    assert result_error(good | {"version": True}, SITE_BUILD) == (
        "field 'version': 1, the format version this benchbook reads (got true or false)"
    )
    assert result_error(good | {"version": 0}, SITE_BUILD) == (
        "field 'version': 1, the format version this benchbook reads (got 0)"
    )
    assert result_error(good, COLD_FLOOR) == (
        'field \'kind\': "benchbook-cold-floor", what benchmarks/cold_floor.py writes (got "benchbook-site-build")'
    )
    assert result_error([good], SITE_BUILD) == "the whole file: a JSON object (got a list)"


def test_the_site_benchmark_writes_what_the_page_reads(tmp_path: Path) -> None:
    row = site_build.Row(kind="synthetic", records=10, build_s=2.0, peak_rss_mib=100.0, site_mib=1.0, files=20,
                         pages=15, largest_page="records/index.html", largest_page_kib=12.0, search_index_kib=3.0,
                         plain_build_s=1.0, phases={"load": 0.5})  # fmt: skip
    args = argparse.Namespace(output=tmp_path / "site-build.json", sizes=[10], serve_max=0, no_plain=False)
    site_build.write_result(args, [row], datetime.now(UTC), (1.0, 1.0, 1.0), {"commit": "abc", "dirty": False})
    cold_floor.write_result(tmp_path / "cold-floor.json", [{"records": 10, "cores": 2, "floor": 1.0}],
                            datetime.now(UTC), {"commit": "abc", "dirty": False})  # fmt: skip
    results = load_results(tmp_path)
    assert results["site-build.json"]["rows"][0]["ratio"] == 2.0
    assert results["cold-floor.json"]["rows"][0]["floor"] == 1.0
    assert result_error(results["site-build.json"], SITE_BUILD) is None
