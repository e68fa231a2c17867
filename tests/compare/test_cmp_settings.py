from __future__ import annotations

from pathlib import Path

import pytest
from cmp_fixtures import ROOT

from bench.compare.settings import DEFAULT_TREATMENT, Settings, SettingsError, load_settings


def test_repo_settings_load_and_declare_the_lab_experiment() -> None:
    s = load_settings(ROOT / "benchbook.yaml")
    exp = s.experiments["eagle-fast-verify"]
    assert exp.baseline == "baseline"
    assert "speculative.*" in exp.treatment
    assert s.regression.window >= 1 and 0 < s.regression.ratio_threshold < 1
    assert s.treatment_for("eagle-fast-verify") == tuple(exp.treatment)
    assert s.treatment_for("unknown") == tuple(s.default_treatment)


def test_defaults_without_a_file() -> None:
    s = Settings()
    assert s.treatment_for(None) == DEFAULT_TREATMENT
    assert s.regression.min_history >= 1


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("regression:\n  window: 0\n", "regression.window", "greater than or equal to 1"),
        ("regression:\n  ratio_threshold: 2\n", "regression.ratio_threshold", "less than 1"),
        ("experiments:\n  x:\n    baseline: b\n", "experiments.x.title", "required"),
        ("regresion: {}\n", "regresion", "Extra inputs"),
        ("- a\n- b\n", "(whole file)", "a mapping at the top level"),
        ("regression: [\n", "line", "valid YAML"),
    ],
)
def test_bad_settings_name_file_and_field(tmp_path: Path, text: str, field: str, expected: str) -> None:
    path = tmp_path / "benchbook.yaml"
    path.write_text(text)
    with pytest.raises(SettingsError) as info:
        load_settings(path)
    assert info.value.path == str(path)
    assert info.value.field.startswith(field)
    assert expected in info.value.expected


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="readable"):
        load_settings(tmp_path / "nope.yaml")
