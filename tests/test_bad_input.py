"""Every row of ``tests/bad_input_cases.py`` run as a user would (``python -m bench ...`` in a subprocess): the exit
status the row states, one ``error:`` line in the project's shape naming the file or flag and the field, no
traceback, and nothing written."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from bad_input_cases import BAD_INPUT_CASES

ROOT = Path(__file__).resolve().parents[1]
VLLM = ROOT / "tests" / "importers" / "fixtures" / "vllm-bench-serve-constructed.json"
PROMPTS = '{"name": "tiny", "description": "t", "license": "CC0-1.0", "source": "tests"}\n' + (
    '{"id": "a", "messages": [{"role": "user", "content": "Say hi."}]}\n'
)


@dataclass
class Case:
    argv: list[str]
    error: str  # the error line, exactly (without "error: ")
    watched: list[Path] = field(default_factory=list)  # must not exist afterwards, or hold no file
    hidden: str | None = None  # a value the output must not repeat


def _file(tmp: Path) -> Path:
    path = tmp / "a-file"
    path.write_text("not a folder\n", encoding="utf-8")
    return path


def _config(tmp: Path, text: str | None = None) -> Path:
    (tmp / "prompts.jsonl").write_text(PROMPTS, encoding="utf-8")
    cfg = tmp / "run.yaml"
    cfg.write_text(
        text
        or (
            "experiment: bad-input\nvariant: plain\nengine: testserver\n"
            f"prompt_set: {tmp / 'prompts.jsonl'}\nlevels: [1]\nrecords_dir: {tmp / 'records'}\n"
        ),
        encoding="utf-8",
    )
    return cfg


NAME_RULE = (
    "a name of lowercase letters, digits, '.', '_' and '-' that starts with a letter or digit, at most 100 "
    "characters, and does not look like a key or token"
)


def import_records_dir_is_a_file(tmp: Path) -> Case:
    f = _file(tmp)
    return Case(
        ["import", "vllm", str(VLLM), "--records-dir", str(f)],
        f"{f}: field '--records-dir': a folder to write records into (this is a file)",
    )


def import_records_dir_under_a_file(tmp: Path) -> Case:
    f = _file(tmp)
    return Case(
        ["import", "vllm", str(VLLM), "--records-dir", str(f / "records")],
        f"{f}/records/imported: field '--records-dir': a folder that can be created (Not a directory)",
    )


def import_experiment_climbs_out(tmp: Path) -> Case:
    return Case(
        ["import", "vllm", str(VLLM), "--experiment", "../x", "--records-dir", str(tmp / "records")],
        f"--experiment: field 'experiment': {NAME_RULE} (got \"../x\")",
        [tmp / "records", tmp / "x"],
    )


def import_variant_climbs_out(tmp: Path) -> Case:
    return Case(
        ["import", "vllm", str(VLLM), "--variant", "../../y", "--records-dir", str(tmp / "records")],
        f"--variant: field 'variant': {NAME_RULE} (got \"../../y\")",
        [tmp / "records"],
    )


def import_variant_looks_like_a_key(tmp: Path) -> Case:
    return Case(
        ["import", "vllm", str(VLLM), "--variant", "sk-abcdefgh12345678", "--records-dir", str(tmp / "records")],
        f"--variant: field 'variant': {NAME_RULE} (got \"<redacted>\")",
        [tmp / "records"],
        hidden="sk-abcdefgh12345678",
    )


def import_text_over_its_cap(tmp: Path) -> Case:
    data = json.loads(VLLM.read_text(encoding="utf-8"))
    data["date"] = "2026-12-01 " * 18_182  # 200,002 characters
    src = tmp / "vllm-long-date.json"
    src.write_text(json.dumps(data), encoding="utf-8")
    return Case(
        ["import", "vllm", str(src), "--records-dir", str(tmp / "records")],
        f"{src}: field 'provenance.notes': String should have at most 4000 characters (got \"vllm-long-date.json "
        "whole file: the tool states date 2026-12-01 2026-12-01 202… (200,242 characters))",
        [tmp / "records"],
    )


def render_output_is_a_file(tmp: Path) -> Case:
    f = _file(tmp)
    return Case(["render", str(f)], f"{f}: field 'OUT_DIR': a folder to write the pages into (this is a file)")


def render_output_under_a_file(tmp: Path) -> Case:
    f = _file(tmp)
    return Case(
        ["render", str(f / "site")], f"{f}/site: field 'OUT_DIR': a folder that can be created (Not a directory)"
    )


def render_records_folder_missing(tmp: Path) -> Case:
    return Case(
        ["render", str(tmp / "out"), "--records", str(tmp / "recordz")],
        f"{tmp / 'recordz'}: field '--records': a folder of records",
        [tmp / "out"],
    )


def settings_duplicate_key(tmp: Path) -> Case:
    text = (ROOT / "benchbook.yaml").read_text(encoding="utf-8")
    first = "    baseline: baseline          # the variant every other variant is compared with\n"
    assert first in text
    text = text.replace(first, first + "    baseline: eagle3\n", 1)
    settings = tmp / "benchbook.yaml"
    settings.write_text(text, encoding="utf-8")
    line = text.splitlines().index("    baseline: eagle3") + 1
    return Case(
        ["render", str(tmp / "out"), "--settings", str(settings)],
        f"{settings}: field 'line {line} column 5': valid YAML (the key \"baseline\" appears twice (first on line "
        f"{line - 1}); give each key once)",
        [tmp / "out"],
    )


def config_duplicate_key(tmp: Path) -> Case:
    cfg = _config(tmp)
    cfg.write_text(cfg.read_text(encoding="utf-8") + "engine: sglang\n", encoding="utf-8")
    return Case(
        ["run", str(cfg)],
        f"{cfg}: field 'line 7 column 1': valid YAML (the key \"engine\" appears twice (first on line 3); give "
        "each key once)",
        [tmp / "records"],
    )


def config_variant_looks_like_a_key(tmp: Path) -> Case:
    cfg = _config(tmp)
    return Case(
        ["run", str(cfg), "--variant", "sk-abcdefgh12345678"],
        f"{cfg}: field 'variant': a name that does not look like a key or token (it names the record's file and "
        'page) (got "<redacted>")',
        [tmp / "records"],
        hidden="sk-abcdefgh12345678",
    )


SETUPS: dict[str, Callable[[Path], Case]] = {
    "import/records-dir-is-a-file": import_records_dir_is_a_file,
    "import/records-dir-under-a-file": import_records_dir_under_a_file,
    "import/experiment-climbs-out": import_experiment_climbs_out,
    "import/variant-climbs-out": import_variant_climbs_out,
    "import/variant-looks-like-a-key": import_variant_looks_like_a_key,
    "import/text-over-its-cap": import_text_over_its_cap,
    "render/output-is-a-file": render_output_is_a_file,
    "render/output-under-a-file": render_output_under_a_file,
    "render/records-folder-missing": render_records_folder_missing,
    "settings/duplicate-key": settings_duplicate_key,
    "config/duplicate-key": config_duplicate_key,
    "config/variant-looks-like-a-key": config_variant_looks_like_a_key,
}


def test_every_row_has_a_test_and_every_test_a_row() -> None:
    assert [name for name, _, _ in BAD_INPUT_CASES] == list(SETUPS)


def _files_under(paths: list[Path]) -> list[Path]:
    return [f for p in paths if p.exists() for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]


@pytest.mark.parametrize(("name", "what", "outcome"), BAD_INPUT_CASES, ids=[c[0] for c in BAD_INPUT_CASES])
def test_bad_input(tmp_path: Path, name: str, what: str, outcome: str) -> None:
    case = SETUPS[name](tmp_path)
    before = sorted(p for p in tmp_path.rglob("*"))
    proc = subprocess.run(
        [sys.executable, "-m", "bench", *case.argv], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    expected_exit = int(re.match(r"exit (\d+);", outcome).group(1))  # type: ignore[union-attr]
    assert proc.returncode == expected_exit, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "errors.pydantic.dev" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: {case.error}"], proc.stderr
    assert not _files_under(case.watched), "something was written"
    assert sorted(p for p in tmp_path.rglob("*")) == before, "a file or folder appeared"
    if case.hidden is not None:
        assert case.hidden not in proc.stdout + proc.stderr


def test_a_valid_user_value_is_used_exactly_as_given(tmp_path: Path) -> None:
    """The other side of 'never change a user's value silently': a valid --experiment/--variant is kept as is."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "import", "vllm", str(VLLM), "--experiment", "my.exp_1", "--variant",
         "v-2.b_c", "--records-dir", str(tmp_path / "records")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (path,) = (tmp_path / "records" / "my.exp_1").glob("*.json")
    assert "-v-2.b_c-" in path.name
    shutil.rmtree(tmp_path / "records")
