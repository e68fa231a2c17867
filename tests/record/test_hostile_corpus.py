"""The hostile corpus (``tests/record/hostile/cases.yaml``): each malformed or hostile record file gives its exact
error, naming the file and the field, through the loader, ``bench validate`` and a site render, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.errors import load_yaml
from bench.record import RecordError, load_record, load_records

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).parent / "hostile"
MANIFEST: dict[str, Any] = load_yaml((HOSTILE / "cases.yaml").read_text(encoding="utf-8"))
CASES: list[dict[str, str]] = MANIFEST["cases"]


def _message(case: dict[str, str], path: Path) -> str:
    return f"{path}: field '{case['field']}': {case['expected']}"


def test_the_corpus_is_complete_and_its_base_is_valid() -> None:
    assert len(CASES) >= 30
    listed = {c["file"] for c in CASES} | {MANIFEST["valid"]}
    on_disk = {p.relative_to(HOSTILE).as_posix() for p in HOSTILE.rglob("*.json")}
    assert listed == on_disk  # no file without its expected error, no expected error without its file
    assert len(listed) == len(CASES) + 1
    base = load_record(HOSTILE / MANIFEST["valid"]).record  # each case breaks a record that loads
    assert base.experiment == "hostile" and base.levels


@pytest.mark.parametrize("case", CASES, ids=[c["file"].split("-")[1] for c in CASES])
def test_each_file_gives_its_exact_error(case: dict[str, str]) -> None:
    path = HOSTILE / case["file"]
    with pytest.raises(RecordError) as info:
        load_record(path)
    assert str(info.value) == _message(case, path)


def test_the_folder_loads_the_valid_record_and_reports_every_other(tmp_path: Path) -> None:
    result = load_records(HOSTILE)
    assert [r.record.id for r in result.records] == [Path(MANIFEST["valid"]).stem]
    assert sorted(str(e) for e in result.errors) == sorted(_message(c, HOSTILE / c["file"]) for c in CASES)


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def test_bench_validate_names_each_file_and_field() -> None:
    rel = HOSTILE.relative_to(ROOT)
    proc = _bench("validate", str(rel))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = sorted(line.removeprefix("error: ") for line in proc.stderr.splitlines())
    assert lines == sorted(_message(c, rel / c["file"]) for c in CASES)
    assert proc.stdout.strip() == f"1 valid record(s), {len(CASES)} error(s)"


def test_a_render_of_the_corpus_shows_every_error_and_the_valid_record(tmp_path: Path) -> None:
    rel = HOSTILE.relative_to(ROOT)
    proc = _bench("render", str(tmp_path / "out"), "--records", str(rel))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    index = (tmp_path / "out" / "records" / "index.md").read_text(encoding="utf-8")
    assert f"{len(CASES)} bad record or dead-end file(s)" in index
    for case in CASES:
        assert Path(case["file"]).name.replace("-", "\\-").replace(".", "\\.").replace("_", "\\_") in index
    assert (tmp_path / "out" / "records" / "hostile" / f"{Path(MANIFEST['valid']).stem}.md").is_file()
